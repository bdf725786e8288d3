import Contract
import ProvisionerCLI

/// A scenario's options: every one has a default, and `read` takes from the command line those
/// that were given.
protocol BenchOptions: Sendable {
    /// The defaults.
    init()
    /// Replaces the defaults with the options `arguments` gives (without rejecting the rest).
    mutating func read(_ arguments: inout CommandArguments) throws
}

/// The options the load scenarios share, each with one range.
extension CommandArguments {
    /// `--rate` (or `name`): requests per second offered, 1 to 100,000.
    mutating func rate(_ name: String = "rate", default value: Int) throws(UsageError) -> Int {
        try integer(name, default: value, in: 1...100_000)
    }

    /// `--seconds` of load, 1 to an hour unless `range` says otherwise.
    mutating func seconds(default value: Int, in range: ClosedRange<Int> = 1...3_600) throws(UsageError) -> Int {
        try integer("seconds", default: value, in: range)
    }

    /// `--partitions` per topic, 1 to 64.
    mutating func partitions(default value: Int) throws(UsageError) -> Int {
        try integer("partitions", default: value, in: 1...64)
    }

    /// `--issuer-ms`: the simulator's fixed latency, 0 to a minute.
    mutating func issuerMs(default value: Int) throws(UsageError) -> Int {
        try integer("issuer-ms", default: value, in: 0...60_000)
    }

    /// `--max-in-flight`: calls in flight the worker allows, 1 to 100,000.
    mutating func maxInFlight(default value: Int) throws(UsageError) -> Int {
        try integer("max-in-flight", default: value, in: 1...100_000)
    }

    /// `--reply-curve p256|x25519` (default p256): the curve of the load's reply keys.
    mutating func replyCurve() throws(UsageError) -> JWKCurve {
        switch option("reply-curve") {
        case nil, "p256"?: return .p256
        case "x25519"?: return .x25519
        default: throw UsageError("--reply-curve takes p256 or x25519")
        }
    }
}
