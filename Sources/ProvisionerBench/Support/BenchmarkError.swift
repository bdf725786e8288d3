/// A benchmark that could not run; the message says what to do.
struct BenchmarkError: Error, Sendable, CustomStringConvertible {
    /// What went wrong and what to do.
    var message: String

    /// Creates an error.
    init(_ message: String) {
        self.message = message
    }

    /// The message.
    var description: String { message }
}
