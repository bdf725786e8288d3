/// The JSON object `provisioner-bench http-client --json` prints.
struct HTTPClientBenchmarkSummary: Codable, Sendable {
    var scenario = "http-client"
    var processors: Int
    var loadAverageAtStart: Double
    var bodyBytes: Int
    var burstRequests: Int
    var burstInFlight: Int
    var sustainedInFlight: Int
    var sustainedDelayMs: Int
    var sustainedWindowSeconds: Double
    var results: [LoadPhaseResult]
}
