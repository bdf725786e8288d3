/// `provisioner dlq`: lists, shows and replays dead letters.
enum DLQCommand: Command {
    static let name = "dlq"
    static let summary = "lists, shows and replays dead letters"
    static let help = "usage: provisioner dlq\n\nlists, shows and replays dead letters (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'dlq' is not built yet")
    }
}
