import Contract
import Foundation
import Harness
import HTTP
import Issuers
import Observability
import ProvisionerCLI
import Synchronization

/// `bench throughput`: a zero-latency simulator and open-loop load at rising rates until the
/// worker saturates; the same run measures a bare HTTP loop (same client, same simulator, no Kafka,
/// no validation) for the ratio.
enum ThroughputBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// Offered rates, requests per second, in order.
        var rates: [Double] = [500, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000]
        /// Seconds per rate.
        var seconds = 5
        /// Partitions per topic.
        var partitions = 6
        /// Calls in flight the worker allows.
        var maxInFlight = 1_024
        /// The worker producer's `linger.ms` (batching of markers, results and audit events).
        var lingerMs = 2
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            if let text = arguments.option("rates") {
                rates = try text.split(separator: ",").map { word in
                    guard let rate = Double(word), rate > 0 else { throw UsageError("--rates takes positive numbers separated by commas") }
                    return rate
                }
            }
            seconds = try arguments.seconds(default: seconds, in: 1...600)
            partitions = try arguments.partitions(default: partitions)
            maxInFlight = try arguments.maxInFlight(default: maxInFlight)
            lingerMs = try arguments.integer("linger-ms", default: lingerMs, in: 0...1_000)
        }
    }

    /// Runs the scenario; `progress` gets a line per step.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let rig = try BenchRig(partitions: options.partitions, profile: PipelineBench.profile(latency: #"{"distribution": "fixed", "ms": 0}"#),
                               groupID: "bench-throughput") {
            PipelineBench.tune(&$0, maxInFlight: options.maxInFlight, maxPending: options.maxInFlight * 8, lingerMs: options.lingerMs)
        }
        defer { rig.stop() }
        let (stack, factory, phase) = (rig.stack, rig.factory, rig.phase)

        var rows: [[String]] = []
        var steps: [BenchPhase.Figures] = []
        for rate in options.rates {
            progress("preparing \(Int(rate) * options.seconds) requests for \(Int(rate))/s")
            let items = try RequestPool.make(Int(rate) * options.seconds, mix: .imprint, factory: factory)
            progress("offering \(Int(rate))/s for \(options.seconds) s")
            let figures = phase.run(items, rate: rate, drainTimeoutMs: 60_000)
            steps.append(figures)
            rows.append([String(Int(rate)), PipelineBench.figure(figures.achievedPerSecond), "\(figures.answered)/\(figures.sent)",
                         PipelineBench.ms(figures.latency(0.5)), PipelineBench.ms(figures.latency(0.99)),
                         PipelineBench.figure(figures.cpuPercent), PipelineBench.figure(figures.cpuMicrosecondsPerRequest)])
            progress("  achieved \(PipelineBench.figure(figures.achievedPerSecond))/s, p99 \(PipelineBench.ms(figures.latency(0.99))) ms, worker CPU \(PipelineBench.figure(figures.cpuPercent))%")
            if figures.achievedPerSecond < 0.9 * rate || (figures.latency(0.99) ?? 0) > 2_000 { break }
        }
        let sustained = steps.filter { $0.achievedPerSecond >= 0.9 * $0.offeredPerSecond && ($0.latency(0.99) ?? 0) <= 2_000 }
            .map(\.achievedPerSecond).max() ?? steps.map(\.achievedPerSecond).max() ?? 0
        let peak = steps.map(\.achievedPerSecond).max() ?? 0
        let cpuAtSustained = steps.first { $0.achievedPerSecond == sustained }?.cpuMicrosecondsPerRequest ?? 0

        progress("bare HTTP loop: the same client and simulator, no Kafka, no validation")
        let bare = try bareHTTPRate(simulatorURL: stack.simulatorURL, factory: factory, seconds: options.seconds)
        let ratio = bare > 0 ? sustained / bare : 0

        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("throughput")
        writer.key("sustained_per_second"); writer.integer(Int64(sustained))
        writer.key("peak_per_second"); writer.integer(Int64(peak))
        writer.key("cpu_us_per_request"); writer.integer(Int64(cpuAtSustained))
        writer.key("bare_http_per_second"); writer.integer(Int64(bare))
        writer.key("ratio_to_bare_http"); writer.string(String(format: "%.2f", ratio))
        writer.key("steps"); writer.beginArray()
        for step in steps {
            writer.beginObject()
            writer.key("offered"); writer.integer(Int64(step.offeredPerSecond))
            writer.key("achieved"); writer.integer(Int64(step.achievedPerSecond))
            writer.key("p50_ms"); writer.integer(orNull: step.latency(0.5))
            writer.key("p99_ms"); writer.integer(orNull: step.latency(0.99))
            writer.key("cpu_percent"); writer.integer(Int64(step.cpuPercent))
            writer.key("cpu_us_per_request"); writer.integer(Int64(step.cpuMicrosecondsPerRequest))
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return BenchmarkReport(
            title: "throughput: zero-latency simulator, Imprint Apple Pay + Google Wallet, 1 worker, \(options.partitions) partitions, open-loop load",
            columns: ["OFFERED/S", "ACHIEVED/S", "ANSWERED", "P50 MS", "P99 MS", "WORKER CPU %", "CPU µs/REQ"],
            rows: rows,
            notes: [
                "sustained: \(Int(sustained)) requests/s (peak \(Int(peak))/s) at \(Int(cpuAtSustained)) µs of worker CPU per request",
                "bare HTTP loop, same client and simulator: \(Int(bare)) requests/s; pipeline / bare = \(String(format: "%.2f", ratio))",
                "every process on the same 2 cores: broker, simulator, worker and this load generator",
                PipelineBench.machine,
            ],
            json: writer.text)
    }

    /// Calls the simulator's Imprint API directly with the project's HTTP client, 256 in flight,
    /// for `seconds`, with requests built by the Imprint adapter: requests per second.
    static func bareHTTPRate(simulatorURL: String, factory: RequestFactory, seconds: Int) throws -> Double {
        let items = try RequestPool.make(20_000, mix: .imprint, factory: factory, cardPrefix: "bare")
        let endpoint = IssuerEndpoint(program: "demo-imprint", kind: .imprint, baseURL: "\(simulatorURL)/imprint",
                                      credentials: IssuerCredentials(apiKey: Sensitive("sim-imprint-key")))
        let requests: [HTTPClientRequest] = items.compactMap { item in
            guard case .decoded(let request) = RequestDecoder.decode(item.value),
                  var http = try? endpoint.adapter.makeRequest(for: request) else { return nil }
            http.timeoutMs = 10_000
            return http
        }
        let client = HTTPClient()
        defer { client.shutdown() }
        let state = Mutex((next: 0, completed: 0))
        let finished = DispatchSemaphore(value: 0)
        let deadline = ProcessUsage.monotonicMilliseconds() + Double(seconds) * 1000
        let inFlight = 256
        @Sendable func issue() {
            let index: Int? = state.withLock { state in
                guard state.next < requests.count, ProcessUsage.monotonicMilliseconds() < deadline else { return nil }
                defer { state.next += 1 }
                return state.next
            }
            guard let index else {
                finished.signal()
                return
            }
            client.execute(requests[index]) { _ in
                state.withLock { $0.completed += 1 }
                issue()
            }
        }
        let start = ProcessUsage.monotonicMilliseconds()
        for _ in 0..<inFlight { issue() }
        for _ in 0..<inFlight { finished.wait() }
        let elapsed = ProcessUsage.monotonicMilliseconds() - start
        return Double(state.withLock { $0.completed }) / (elapsed / 1000)
    }
}
