/// A benchmark that could not run; the message says what to do.
public struct BenchmarkError: Error, Sendable, CustomStringConvertible {
    /// What went wrong and what to do.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
