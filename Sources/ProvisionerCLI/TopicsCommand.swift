/// `provisioner topics`: creates or updates the pipeline topics on a cluster.
enum TopicsCommand: Command {
    static let name = "topics"
    static let summary = "creates or updates the pipeline topics on a cluster"
    static let help = "usage: provisioner topics\n\ncreates or updates the pipeline topics on a cluster (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'topics' is not built yet")
    }
}
