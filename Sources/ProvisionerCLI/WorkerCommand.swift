/// `provisioner worker`: runs the production worker (a consumer group member).
enum WorkerCommand: Command {
    static let name = "worker"
    static let summary = "runs the production worker (a consumer group member)"
    static let help = "usage: provisioner worker\n\nruns the production worker (a consumer group member) (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'worker' is not built yet")
    }
}
