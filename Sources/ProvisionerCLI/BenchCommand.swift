/// `provisioner bench`: runs a benchmark scenario.
enum BenchCommand: Command {
    static let name = "bench"
    static let summary = "runs a benchmark scenario"
    static let help = "usage: provisioner bench\n\nruns a benchmark scenario (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'bench' is not built yet")
    }
}
