/// One `provisioner` subcommand.
public protocol Command {
    /// The word that selects the command (`worker`, `dlq`).
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The full `--help` text.
    static var help: String { get }
    /// Options that take no value (`json`, `dry-run`).
    static var switchNames: Set<String> { get }
    /// Runs the command; returns the process exit status.
    static func run(_ arguments: inout CommandArguments) throws -> Int32
}

extension Command {
    public static var switchNames: Set<String> { [] }
}

/// A failure that ends a command with a one-line reason on stderr and a non-zero exit status.
public struct CommandFailure: Error, Sendable, CustomStringConvertible {
    /// The reason, one line, never holding a secret.
    public var message: String
    /// The exit status (1 for failures, 2 for usage).
    public var exitStatus: Int32
    /// Creates a failure.
    public init(_ message: String, exitStatus: Int32 = 1) {
        self.message = message
        self.exitStatus = exitStatus
    }
    public var description: String { message }
}
