/// Where a secret's bytes come from: an environment variable (the `…_env` key) or a file (the
/// `…_file` key, e.g. a Kubernetes secret volume's `/var/run/secrets/provisioner/audit-key`).
/// Either way the configuration holds only the name, never the value.
public enum SecretSource: Sendable, Hashable, CustomStringConvertible {
    /// An environment variable, read once at start.
    case environment(String)
    /// A file, read at start and again whenever it changes (`SecretResolver`).
    case file(String)

    /// The environment variable's name, or nil for a file.
    public var variable: String? {
        if case .environment(let name) = self { return name }
        return nil
    }

    /// The file's path, or nil for an environment variable.
    public var path: String? {
        if case .file(let path) = self { return path }
        return nil
    }

    /// The configuration key suffix that names this kind of source.
    public var keySuffix: String {
        switch self {
        case .environment: "_env"
        case .file: "_file"
        }
    }

    /// How issues name it: `environment variable NAME` or `file PATH` (never the value).
    public var description: String {
        switch self {
        case .environment(let name): "environment variable \(name)"
        case .file(let path): "file \(path)"
        }
    }
}

/// One secret a configuration names: the key that names it (`programs.acme.api_key_file`) and
/// where its bytes come from.
public struct SecretReference: Sendable, Hashable {
    /// The configuration key naming it, e.g. `audit.pseudonym_key_env` or `programs.acme.api_key_file`.
    public var keyPath: String
    /// Where its bytes come from.
    public var source: SecretSource
}
