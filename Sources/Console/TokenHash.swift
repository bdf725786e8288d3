import COpenSSL
import Contract

/// A console token stored as a salted PBKDF2-HMAC-SHA256 hash (OpenSSL's `PKCS5_PBKDF2_HMAC`):
/// `pbkdf2-sha256$ITERATIONS$SALT$HASH`, salt and hash in standard base64. The configuration
/// holds only this text; the token itself is never stored or logged.
public struct TokenHash: Sendable, Hashable, CustomStringConvertible {
    /// The scheme prefix.
    public static let scheme = "pbkdf2-sha256"
    /// Iterations `provisioner console hash-token` uses unless told otherwise.
    public static let defaultIterations = 210_000
    /// Fewest iterations a configuration may name.
    public static let minimumIterations = 10_000

    /// PBKDF2 iterations.
    public let iterations: Int
    /// Random salt (16 bytes when minted here).
    public let salt: [UInt8]
    /// The derived key (32 bytes).
    public let hash: [UInt8]

    /// Mints a hash of `token` with a fresh random salt.
    public init(token: String, iterations: Int = TokenHash.defaultIterations) {
        let salt = Crypto.randomBytes(16)
        self.iterations = iterations
        self.salt = salt
        self.hash = Self.derive(token: token, salt: salt, iterations: iterations)
    }

    /// Reads the stored form; nil when it is not `pbkdf2-sha256$N$SALT$HASH` with N at least
    /// `minimumIterations`, a salt of 8+ bytes and a 32-byte hash.
    public init?(stored text: String) {
        let parts = text.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == Self.scheme, let iterations = Int(parts[1]),
              (Self.minimumIterations...10_000_000).contains(iterations),
              let salt = Crypto.base64Decode(parts[2]), salt.count >= 8,
              let hash = Crypto.base64Decode(parts[3]), hash.count == 32
        else { return nil }
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    /// The stored form.
    public var description: String {
        "\(Self.scheme)$\(iterations)$\(Crypto.base64Encode(salt))$\(Crypto.base64Encode(hash))"
    }

    /// Whether `token` derives this hash (compared in constant time).
    public func matches(_ token: String) -> Bool {
        let candidate = Self.derive(token: token, salt: salt, iterations: iterations)
        return ConstantTime.equal(candidate, hash)
    }

    static func derive(token: String, salt: [UInt8], iterations: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let password = Array(token.utf8)
        let status = password.withUnsafeBufferPointer { pass in
            salt.withUnsafeBufferPointer { saltBuffer in
                PKCS5_PBKDF2_HMAC(pass.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, Int32(pass.count),
                                  saltBuffer.baseAddress, Int32(saltBuffer.count), Int32(iterations), EVP_sha256(), 32, &output)
            }
        }
        precondition(status == 1, "PKCS5_PBKDF2_HMAC failed")
        return output
    }
}

/// Comparisons whose time does not depend on where the inputs differ.
enum ConstantTime {
    /// Equal length and bytes, via OpenSSL's `CRYPTO_memcmp`.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { left in b.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, a.count) == 0 } }
    }

    /// Equal strings (UTF-8 bytes).
    static func equal(_ a: String, _ b: String) -> Bool { equal(Array(a.utf8), Array(b.utf8)) }
}
