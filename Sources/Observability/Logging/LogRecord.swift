/// One structured log line.
public struct LogRecord: Sendable {
    /// Wall-clock time in milliseconds since the epoch.
    public var atMs: Int64
    /// Severity.
    public var level: LogLevel
    /// The component that logged (`worker`, `simulator`).
    public var label: String
    /// A short fixed message; variable parts belong in `fields`.
    public var message: String
    /// Structured fields in the order given.
    public var fields: [(String, LogValue)]

    /// The value of a field, if present.
    public func field(_ name: String) -> LogValue? {
        fields.first { $0.0 == name }?.1
    }
}
