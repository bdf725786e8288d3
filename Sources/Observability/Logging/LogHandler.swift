/// Where log records go. Implementations must be thread-safe.
public protocol LogHandler: Sendable {
    /// Emits one record.
    func emit(_ record: LogRecord)
}
