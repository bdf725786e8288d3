import ProvisionerCLI

/// The open-loop load a scenario offers: requests per second, for how long, over how many
/// partitions per topic.
struct OpenLoad: Sendable {
    /// Requests per second offered.
    var rate: Int
    /// Seconds of load.
    var seconds: Int
    /// Partitions per topic.
    var partitions = 6

    /// Reads `--rate`, `--seconds` (within `secondsRange`) and `--partitions`.
    mutating func read(_ arguments: inout CommandArguments, seconds secondsRange: ClosedRange<Int> = 1...3_600) throws(UsageError) {
        rate = try arguments.rate(default: rate)
        seconds = try arguments.seconds(default: seconds, in: secondsRange)
        partitions = try arguments.partitions(default: partitions)
    }
}
