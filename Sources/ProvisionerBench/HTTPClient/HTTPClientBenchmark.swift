import Foundation
import HTTP

/// `provisioner-bench http-client`: URLSession against `HTTPClient`, both posting to an
/// `HTTPServer` in a child process, each client measured in a fresh process of its own.
///
/// Phases: *burst* (N POSTs of 2 KB, 64 in flight, answered at once: throughput, CPU per request,
/// latency) and *sustained* (2,000 in flight, each answer held 1 s by the server: sustained rate,
/// CPU %, threads, memory, tail latency).
enum HTTPClientBenchmark {
    /// The scenario name on the command line.
    static let name = "http-client"
    /// One line for `provisioner-bench --help`.
    static let summary = "URLSession vs HTTPClient (libcurl multi) against a loopback HTTPServer"

    private static let phases = ["burst", "sustained"]

    /// Runs the whole comparison (server child plus one client child per client and phase).
    static func run(_ options: HTTPClientBenchmarkOptions) throws(BenchmarkError) -> BenchmarkReport {
        ResourceLimits.raiseOpenFileLimit()
        let loadAtStart = ProcessUsage.loadAverage()
        let server = try PipedChildProcess(arguments: [name, "--role", "server"])
        defer {
            server.closeInput()
            _ = server.wait()
        }
        guard let line = server.readLine(), line.hasPrefix("PORT "), let port = UInt16(line.dropFirst(5)) else {
            throw BenchmarkError("the benchmark server child did not report its port; run 'provisioner-bench http-client --role server' to see why")
        }
        let stats = HTTPClient()
        defer { stats.shutdown() }

        var results: [LoadPhaseResult] = []
        for phase in phases {
            for client in options.clients {
                _ = serverStats(stats, port: port, path: "/stats/reset")
                var result = runChild(client: client, phase: phase, port: port, options: options)
                if let figures = serverStats(stats, port: port, path: "/stats") {
                    result.serverMaxPending = figures.maxPending
                    result.serverConnections = figures.connections
                }
                results.append(result)
            }
        }
        return report(results, options: options, loadAtStart: loadAtStart)
    }

    /// Child role `server`: prints `PORT <n>` and serves until standard input ends.
    static func serve() throws(BenchmarkError) {
        ResourceLimits.raiseOpenFileLimit()
        let echo = BenchmarkEchoServer()
        let server: HTTPServer
        do {
            server = try echo.start()
        } catch {
            throw BenchmarkError("the benchmark server could not start: \(error)")
        }
        print("PORT \(server.port)")
        fflush(nil)
        while FileHandle.standardInput.availableData.count > 0 {}
        server.stop()
    }

    /// Child role `client`: measures one client in one phase and prints the result as one JSON line.
    static func drive(client: String, phase: String, port: UInt16, options: HTTPClientBenchmarkOptions) throws(BenchmarkError) {
        ResourceLimits.raiseOpenFileLimit()
        let result = try LoadPhase(client: client, phase: phase, port: port, options: options).measure()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(result) else { throw BenchmarkError("could not encode the result") }
        print(String(decoding: data, as: UTF8.self))
    }

    private static func runChild(client: String, phase: String, port: UInt16, options: HTTPClientBenchmarkOptions) -> LoadPhaseResult {
        var failed = LoadPhaseResult.empty(client: client, phase: phase)
        do {
            let child = try PipedChildProcess(arguments: [name, "--role", "client", "--client", client, "--phase", phase,
                                                     "--port", String(port)] + options.arguments)
            var lastLine: String?
            while let line = child.readLine() { lastLine = line }
            let status = child.wait()
            if let lastLine, let result = try? JSONDecoder().decode(LoadPhaseResult.self, from: Data(lastLine.utf8)) {
                return result
            }
            failed.error = "client process exited with status \(status) without a result"
        } catch {
            failed.error = error.message
        }
        return failed
    }

    private struct ServerFigures: Decodable {
        var maxPending: Int
        var connections: Int
    }

    private static func serverStats(_ client: HTTPClient, port: UInt16, path: String) -> ServerFigures? {
        let done = DispatchSemaphore(value: 0)
        let figures = LockedBox<ServerFigures?>(nil)
        client.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)\(path)", timeoutMs: 5_000)) { result in
            if case .success(let response) = result {
                figures.set(try? JSONDecoder().decode(ServerFigures.self, from: Data(response.body)))
            }
            done.signal()
        }
        done.wait()
        return figures.get()
    }

    /// Plain-language findings: a client that could not keep the requested number in flight.
    private static func observations(_ results: [LoadPhaseResult], options: HTTPClientBenchmarkOptions) -> [String] {
        results.filter { $0.phase == "sustained" && $0.error == nil }.compactMap { result in
            let held = result.serverMaxPending ?? 0
            guard held < result.inFlight || result.failures > 0 || result.undrained > 0 else { return nil }
            let name = result.client == "curl" ? "HTTPClient" : "URLSession"
            var text = "\(name): asked for \(result.inFlight) in flight, the server never held more than \(held) at once; "
                + "the rest waited inside the client (p50 \(Int(result.p50Ms)) ms for a \(options.sustainedDelayMs) ms answer), "
                + "\(result.maxThreads) threads, \(Int(result.cpuPercent))% CPU"
            if result.failures > 0 {
                text += "; \(result.failures) failed (" + result.failureKinds.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + ")"
            }
            if result.undrained > 0 { text += "; \(result.undrained) never answered" }
            return text + "."
        }
    }

    private static func report(_ results: [LoadPhaseResult], options: HTTPClientBenchmarkOptions, loadAtStart: Double) -> BenchmarkReport {
        let window = Double(max(1, options.sustainedSeconds - 2))
        let clientNames = ["curl": "HTTPClient (libcurl multi)", "urlsession": "URLSession"]
        let phaseNames = [
            "burst": "\(options.burstRequests) POST \(options.bodyBytes / 1024) KB, \(options.burstInFlight) in flight",
            "sustained": "\(options.sustainedInFlight) in flight, \(options.sustainedDelayMs) ms delay",
        ]
        func number(_ value: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", value) }
        let rows = results.map { result -> [String] in
            let client = clientNames[result.client] ?? result.client
            let phase = phaseNames[result.phase] ?? result.phase
            if let error = result.error {
                return [client, phase, "-", "-", "-", "-", "-", "-", "-", "-", "-", "failed: \(error)"]
            }
            let failures = result.failures == 0 ? "0" : "\(result.failures) " + result.failureKinds.sorted { $0.value > $1.value }
                .prefix(2).map { "\($0.key)×\($0.value)" }.joined(separator: ",")
            return [client, phase, number(result.requestsPerSecond), number(result.cpuMicrosecondsPerRequest),
                    number(result.cpuPercent), number(result.p50Ms, 1), number(result.p99Ms, 1), String(result.maxThreads),
                    number(result.peakResidentMB, 1), result.phase == "burst" ? "-" : result.serverMaxPending.map(String.init) ?? "-",
                    result.serverConnections.map(String.init) ?? "-", failures + (result.undrained > 0 ? ", \(result.undrained) stuck" : "")]
        }
        let processors = ProcessInfo.processInfo.activeProcessorCount
        var notes = [
            "Each client runs in its own fresh process; the server (HTTPServer, libmicrohttpd) in another.",
            "CPU = client process user+sys (getrusage) per completed request, and as % of one core over the window.",
            "burst: after a warm-up of 10 requests per connection; latency over all \(options.burstRequests) requests.",
            "sustained: closed loop for \(options.sustainedSeconds) s; rate, CPU, p50/p99 from completions in the last \(Int(window)) s.",
            "threads = most threads seen in the client process; RSS = its peak resident memory (VmHWM).",
            "srv max held = most delayed answers the server held at once (= requests really in flight); conns = connections it accepted.",
            "failures over the whole phase; 'stuck' = still unanswered when the phase gave up waiting.",
            "Machine: \(processors) CPUs, 1-minute load average \(number(loadAtStart, 2)) at start (shared with other builds).",
        ]
        notes += observations(results, options: options)
        let summary = HTTPClientBenchmarkSummary(
            processors: processors, loadAverageAtStart: loadAtStart, bodyBytes: options.bodyBytes,
            burstRequests: options.burstRequests, burstInFlight: options.burstInFlight,
            sustainedInFlight: options.sustainedInFlight, sustainedDelayMs: options.sustainedDelayMs,
            sustainedWindowSeconds: window, results: results)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let json = (try? encoder.encode(summary)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return BenchmarkReport(
            title: "bench http-client: loopback HTTP/1.1, keep-alive, \(options.bodyBytes)-byte POST bodies",
            columns: ["client", "phase", "req/s", "CPU µs/req", "CPU %", "p50 ms", "p99 ms", "threads", "RSS MB",
                      "srv max held", "conns", "failures"],
            rows: rows, notes: notes, json: json)
    }
}
