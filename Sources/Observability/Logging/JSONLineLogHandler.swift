#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Writes each record as one JSON object per line (`ts`, `level`, `logger`, `msg`, then fields)
/// to a file descriptor, standard error by default.
public final class JSONLineLogHandler: LogHandler {
    private let descriptor: Int32
    private let lock = Mutex(())

    /// Creates a handler writing to `descriptor` (2 = standard error).
    public init(descriptor: Int32 = 2) {
        self.descriptor = descriptor
    }

    public func emit(_ record: LogRecord) {
        var line = "{\"ts\":"
        JSONText.appendQuoted(Timestamps.rfc3339(milliseconds: record.atMs), to: &line)
        line += ",\"level\":\"\(record.level.name)\",\"logger\":"
        JSONText.appendQuoted(record.label, to: &line)
        line += ",\"msg\":"
        JSONText.appendQuoted(record.message, to: &line)
        for (name, value) in record.fields {
            line += ","
            JSONText.appendQuoted(name, to: &line)
            line += ":"
            switch value {
            case .string(let text): JSONText.appendQuoted(text, to: &line)
            case .integer(let number): line += String(number)
            case .double(let number): line += number.isFinite ? String(number) : "null"
            case .bool(let flag): line += flag ? "true" : "false"
            }
        }
        line += "}\n"
        lock.withLock { _ in
            var utf8 = Array(line.utf8)
            var written = 0
            while written < utf8.count {
                let result = utf8.withUnsafeMutableBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
                if result <= 0 { break }
                written += result
            }
            utf8.removeAll()
        }
    }
}
