/// Severity of a log record, lowest first.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, notice, warning, error

    /// The lowercase name used in JSON lines and in configuration.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }

    /// Parses a configuration value (`debug`, `info`, `notice`, `warning`, `error`).
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
