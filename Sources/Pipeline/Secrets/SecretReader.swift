import Contract
import Glibc

/// Reads a secret's current value from its source: the environment captured at start, or the
/// file as it is now. What it says of a secret that cannot be read names the source and the
/// reason, never a byte of the value.
public struct SecretReader: Sendable {
    /// The process environment (or a test's), read for `…_env` secrets.
    public let environment: [String: String]

    /// Creates a reader over `environment`.
    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// The value, or why there is none. A file's trailing line breaks are not part of the secret
    /// (`echo KEY > file` and `kubectl create secret --from-file` give the same key); its other
    /// bytes are, and it must be UTF-8 text.
    public func read(_ source: SecretSource) -> Result<Sensitive, SecretProblem> {
        switch source {
        case .environment(let variable):
            guard let value = environment[variable], !value.isEmpty else { return .failure(.unset(variable)) }
            return .success(Sensitive(value))
        case .file(let path):
            return Self.readFile(path)
        }
    }

    /// The largest secret file read, in bytes: keys are tens of bytes; a larger file is a mistake
    /// (a wrong path), not a key.
    public static let maximumFileBytes = 64 * 1024

    private static func readFile(_ path: String) -> Result<Sensitive, SecretProblem> {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(.unreadable(path, reason: String(cString: strerror(errno)))) }
        defer { _ = Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while bytes.count <= maximumFileBytes {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.unreadable(path, reason: String(cString: strerror(errno))))
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        if bytes.count > maximumFileBytes { return .failure(.unreadable(path, reason: "larger than \(maximumFileBytes) bytes")) }
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        if bytes.isEmpty { return .failure(.empty(path)) }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(.unreadable(path, reason: "not UTF-8 text")) }
        return .success(Sensitive(text))
    }
}

/// Why a secret has no value: what `config check`, the worker's start and `/readyz` say.
public enum SecretProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The environment variable is not set (or empty).
    case unset(String)
    /// The file is empty (or only line breaks).
    case empty(String)
    /// The file cannot be opened or read; `reason` is the system's (no byte of the contents).
    case unreadable(String, reason: String)

    /// E.g. `names file /run/secrets/key, which cannot be read (No such file or directory)`.
    public var description: String {
        switch self {
        case .unset(let variable): "names environment variable \(variable), which is not set"
        case .empty(let path): "names file \(path), which is empty"
        case .unreadable(let path, let reason): "names file \(path), which cannot be read (\(reason))"
        }
    }
}
