/// Drops every record: for a component run inside a measurement whose logs nobody reads.
public struct DiscardingLogHandler: LogHandler {
    /// Creates the handler.
    public init() {}

    /// Drops `record`.
    public func emit(_ record: LogRecord) {}
}
