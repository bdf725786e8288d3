/// A test helper could not do what it was asked; the message says what and what to check.
public struct TestSupportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with what to check.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
