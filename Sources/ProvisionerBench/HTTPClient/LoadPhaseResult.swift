/// The figures one client process measured in one phase (sent from the child as a JSON line).
struct LoadPhaseResult: Codable, Sendable {
    var client: String
    var phase: String
    var inFlight: Int
    /// Requests completed inside the measurement window (successes and failures).
    var completed: Int
    var failures: Int
    /// Most frequent failure descriptions with their counts.
    var failureKinds: [String: Int]
    var windowSeconds: Double
    var requestsPerSecond: Double
    var cpuMicrosecondsPerRequest: Double
    var userCPUMicrosecondsPerRequest: Double
    var cpuPercent: Double
    var p50Ms: Double
    var p99Ms: Double
    var maxThreads: Int
    var residentMB: Double
    var peakResidentMB: Double
    /// Requests still outstanding when the phase gave up waiting.
    var undrained: Int
    /// Filled in by the parent from the server: most requests it held at once, connections accepted.
    var serverMaxPending: Int?
    var serverConnections: Int?
    /// Set by the parent when the child failed.
    var error: String?

    /// The value at fraction `quantile` (0…1) of sorted `values`, or 0 for none.
    static func percentile(_ sorted: [Double], _ quantile: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * quantile).rounded(.up)) - 1))
        return sorted[index]
    }
}

extension LoadPhaseResult {
    /// A result with no figures, for a phase that could not run.
    static func empty(client: String, phase: String) -> LoadPhaseResult {
        LoadPhaseResult(client: client, phase: phase, inFlight: 0, completed: 0, failures: 0, failureKinds: [:], windowSeconds: 0,
                        requestsPerSecond: 0, cpuMicrosecondsPerRequest: 0, userCPUMicrosecondsPerRequest: 0, cpuPercent: 0,
                        p50Ms: 0, p99Ms: 0, maxThreads: 0, residentMB: 0, peakResidentMB: 0, undrained: 0)
    }
}
