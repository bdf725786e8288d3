/// `provisioner config`: validates a configuration file.
enum ConfigCommand: Command {
    static let name = "config"
    static let summary = "validates a configuration file"
    static let help = "usage: provisioner config\n\nvalidates a configuration file (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'config' is not built yet")
    }
}
