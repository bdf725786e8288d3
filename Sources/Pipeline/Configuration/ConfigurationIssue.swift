/// One problem found in a configuration: the key path and what is wrong with it.
public struct ConfigurationIssue: Sendable, Hashable, CustomStringConvertible {
    /// Errors stop `config check` and the worker; warnings are printed and the worker starts.
    public enum Severity: String, Sendable { case error, warning }

    /// How serious it is.
    public var severity: Severity
    /// The key path, e.g. `programs.demo-dcs.api_secret_env` or `kafka`.
    public var keyPath: String
    /// What is wrong and what to do, never holding a secret value.
    public var message: String
    /// True for a key nothing knows: an error for `config check`, a warning at worker start-up.
    public var isUnknownKey: Bool

    /// Creates an issue.
    public init(_ severity: Severity, _ keyPath: String, _ message: String, isUnknownKey: Bool = false) {
        self.severity = severity
        self.keyPath = keyPath
        self.message = message
        self.isUnknownKey = isUnknownKey
    }

    public var description: String { "\(severity.rawValue): \(keyPath): \(message)" }
}

/// The configuration could not be used; every issue names its key.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// Every issue found (errors first).
    public var issues: [ConfigurationIssue]

    /// Creates an error from issues.
    public init(_ issues: [ConfigurationIssue]) { self.issues = issues }

    public var description: String {
        issues.filter { $0.severity == .error }.map(\.description).joined(separator: "; ")
    }
}
