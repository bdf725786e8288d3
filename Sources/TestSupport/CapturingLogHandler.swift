import Observability
import Synchronization

/// Keeps every record in memory: for tests that check what was logged (and what was not).
public final class CapturingLogHandler: LogHandler {
    private let storage = Mutex<[LogRecord]>([])

    /// Creates an empty handler.
    public init() {}

    public func emit(_ record: LogRecord) {
        storage.withLock { $0.append(record) }
    }

    /// Every record so far.
    public var records: [LogRecord] { storage.withLock { $0 } }

    /// Every record as one plain line, `level label message name=value ...`, for text searches.
    public var renderedLines: [String] {
        records.map { record in
            var line = "\(record.level.name) \(record.label) \(record.message)"
            for (name, value) in record.fields { line += " \(name)=\(value)" }
            return line
        }
    }
}
