#if canImport(Glibc)
import Glibc
#endif

/// One client measured in one phase, inside a client child process.
struct LoadPhase {
    let client: String
    let phase: String
    let port: UInt16
    let options: HTTPClientBenchmarkOptions

    func measure() throws(BenchmarkError) -> LoadPhaseResult {
        switch phase {
        case "burst": return try burst()
        case "sustained": return try sustained()
        default: throw BenchmarkError("unknown phase '\(phase)'; use burst or sustained")
        }
    }

    private var url: String { "http://127.0.0.1:\(port)/provision" }

    private var body: [UInt8] {
        // A JSON-looking body of the requested size.
        let filler = String(repeating: "x", count: max(0, options.bodyBytes - 16))
        return Array(#"{"payload":"\#(filler)"}"#.utf8.prefix(options.bodyBytes))
    }

    private func makeClient(inFlight: Int, timeoutMs: Int) throws(BenchmarkError) -> any LoadClient {
        switch client {
        case "curl": return CurlLoadClient(url: url)
        case "urlsession": return URLSessionLoadClient(url: url, maxConnections: inFlight, timeoutSeconds: Double(timeoutMs) / 1000)
        default: throw BenchmarkError("unknown client '\(client)'; use curl or urlsession")
        }
    }

    /// N requests with `burstInFlight` in flight and no server delay.
    private func burst() throws(BenchmarkError) -> LoadPhaseResult {
        let inFlight = options.burstInFlight
        let timeoutMs = 30_000
        let loadClient = try makeClient(inFlight: inFlight, timeoutMs: timeoutMs)
        defer { loadClient.close() }
        let warmUp = ClosedLoopLoad(client: loadClient, body: body, delayMs: 0, timeoutMs: timeoutMs,
                                    requestLimit: inFlight * 10, stopIssuingAtMs: .infinity)
        warmUp.start(inFlight: inFlight)
        var maxThreads = ProcessUsage.threadCount()
        guard wait(upTo: 60_000, sampling: &maxThreads, until: { warmUp.completed == inFlight * 10 }) else {
            throw BenchmarkError("\(client): the warm-up did not finish within 60 s")
        }
        let load = ClosedLoopLoad(client: loadClient, body: body, delayMs: 0, timeoutMs: timeoutMs,
                                  requestLimit: options.burstRequests, stopIssuingAtMs: .infinity)
        let usageBefore = ProcessUsage.now()
        let started = ProcessUsage.monotonicMilliseconds()
        load.start(inFlight: inFlight)
        let finished = wait(upTo: 120_000, sampling: &maxThreads, until: { load.completed == options.burstRequests })
        let elapsedMs = ProcessUsage.monotonicMilliseconds() - started
        let usageAfter = ProcessUsage.now()
        let samples = load.samples
        return summarize(samples: samples, inFlight: inFlight, windowMs: elapsedMs, usageBefore: usageBefore,
                         usageAfter: usageAfter, maxThreads: maxThreads, allSamples: samples,
                         undrained: finished ? 0 : load.outstanding)
    }

    /// `sustainedInFlight` requests always in flight, each answer held `sustainedDelayMs`.
    private func sustained() throws(BenchmarkError) -> LoadPhaseResult {
        let inFlight = options.sustainedInFlight
        let timeoutMs = 10_000
        let loadClient = try makeClient(inFlight: inFlight, timeoutMs: timeoutMs)
        let started = ProcessUsage.monotonicMilliseconds()
        let stopAt = started + Double(options.sustainedSeconds) * 1000
        let windowStart = started + 2000
        let load = ClosedLoopLoad(client: loadClient, body: body, delayMs: options.sustainedDelayMs, timeoutMs: timeoutMs,
                                  requestLimit: .max, stopIssuingAtMs: stopAt)
        load.start(inFlight: inFlight)
        var maxThreads = ProcessUsage.threadCount()
        _ = wait(upTo: windowStart - ProcessUsage.monotonicMilliseconds(), sampling: &maxThreads, until: { false })
        let usageBefore = ProcessUsage.now()
        let measuredFrom = ProcessUsage.monotonicMilliseconds()
        _ = wait(upTo: stopAt - measuredFrom, sampling: &maxThreads, until: { false })
        let usageAfter = ProcessUsage.now()
        let measuredTo = ProcessUsage.monotonicMilliseconds()
        // Let the last wave finish (bounded), then count what never came back.
        let drained = wait(upTo: Double(options.sustainedDelayMs + 3_000), sampling: &maxThreads, until: { load.outstanding == 0 })
        let undrained = drained ? 0 : load.outstanding
        loadClient.close()
        let all = load.samples
        let inWindow = all.filter { $0.endMs >= measuredFrom && $0.endMs <= measuredTo }
        return summarize(samples: inWindow, inFlight: inFlight, windowMs: measuredTo - measuredFrom, usageBefore: usageBefore,
                         usageAfter: usageAfter, maxThreads: maxThreads, allSamples: all, undrained: undrained)
    }

    /// Polls `condition` every 10 ms for up to `milliseconds`, sampling the thread count.
    private func wait(upTo milliseconds: Double, sampling maxThreads: inout Int, until condition: () -> Bool) -> Bool {
        let deadline = ProcessUsage.monotonicMilliseconds() + max(0, milliseconds)
        while ProcessUsage.monotonicMilliseconds() < deadline {
            if condition() { return true }
            maxThreads = max(maxThreads, ProcessUsage.threadCount())
            usleep(10_000)
        }
        return condition()
    }

    private func summarize(samples: [ClosedLoopLoad.Sample], inFlight: Int, windowMs: Double, usageBefore: ProcessUsage,
                           usageAfter: ProcessUsage, maxThreads: Int, allSamples: [ClosedLoopLoad.Sample], undrained: Int) -> LoadPhaseResult {
        let latencies = samples.map(\.latencyMs).sorted()
        var failureKinds: [String: Int] = [:]
        for sample in allSamples {
            if let failure = sample.failure { failureKinds[failure, default: 0] += 1 }
        }
        let count = Double(max(1, samples.count))
        let cpu = Double(usageAfter.totalMicroseconds - usageBefore.totalMicroseconds)
        let user = Double(usageAfter.userMicroseconds - usageBefore.userMicroseconds)
        return LoadPhaseResult(
            client: client, phase: phase, inFlight: inFlight, completed: samples.count,
            failures: failureKinds.values.reduce(0, +), failureKinds: failureKinds, windowSeconds: windowMs / 1000,
            requestsPerSecond: Double(samples.count) / (windowMs / 1000), cpuMicrosecondsPerRequest: cpu / count,
            userCPUMicrosecondsPerRequest: user / count, cpuPercent: cpu / (windowMs * 1000) * 100,
            p50Ms: LoadPhaseResult.percentile(latencies, 0.50), p99Ms: LoadPhaseResult.percentile(latencies, 0.99),
            maxThreads: maxThreads, residentMB: ProcessUsage.residentMegabytes(),
            peakResidentMB: ProcessUsage.peakResidentMegabytes(), undrained: undrained)
    }
}
