/// A child process could not be started, or did not do what was awaited in time.
public struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with the child's recent stderr when useful.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
