#if canImport(Glibc)
import Glibc
#endif

/// A labelled logger in front of a `LogHandler`, dropping records below `minimumLevel`.
public struct Logger: Sendable {
    /// The component name written with every record.
    public var label: String
    /// Records below this level are dropped.
    public var minimumLevel: LogLevel
    /// Where records go.
    public var handler: any LogHandler
    /// Fields every record of this logger carries first (see `with`).
    public var metadata: [(String, LogValue)] = []

    /// Creates a logger.
    public init(label: String, minimumLevel: LogLevel = .info, handler: any LogHandler = JSONLineLogHandler()) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.handler = handler
    }

    /// A logger for a sub-component sharing handler, level and metadata.
    public func child(_ label: String) -> Logger {
        var child = self
        child.label = label
        return child
    }

    /// This logger with `fields` added to its metadata: the swift-log habit of carrying context
    /// (a partition and offset, say) as a value instead of rebuilding the fields at each call.
    public func with(_ fields: [(String, LogValue)]) -> Logger {
        var logger = self
        logger.metadata += fields
        return logger
    }

    /// Emits a record at `level` when it passes the minimum level.
    public func log(_ level: LogLevel, _ message: String, _ fields: [(String, LogValue)] = []) {
        guard level >= minimumLevel else { return }
        handler.emit(LogRecord(atMs: Timestamps.nowMs(), level: level, label: label, message: message,
                               fields: metadata.isEmpty ? fields : metadata + fields))
    }

    /// Emits a debug record.
    public func debug(_ message: String, _ fields: [(String, LogValue)] = []) { log(.debug, message, fields) }
    /// Emits an info record.
    public func info(_ message: String, _ fields: [(String, LogValue)] = []) { log(.info, message, fields) }
    /// Emits a notice record.
    public func notice(_ message: String, _ fields: [(String, LogValue)] = []) { log(.notice, message, fields) }
    /// Emits a warning record.
    public func warning(_ message: String, _ fields: [(String, LogValue)] = []) { log(.warning, message, fields) }
    /// Emits an error record.
    public func error(_ message: String, _ fields: [(String, LogValue)] = []) { log(.error, message, fields) }
}
