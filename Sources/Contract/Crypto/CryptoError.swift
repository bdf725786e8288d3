/// A failure in a cryptographic helper, a key or a JWE.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; extensible.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text.
        public var rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code as text.
        public var description: String { rawValue }

        /// A key is malformed, not on P-256, or of the wrong type.
        public static let invalidKey = Code(rawValue: "invalid_key")
        /// A JWE is malformed or uses algorithms other than ECDH-ES + A256GCM.
        public static let invalidJWE = Code(rawValue: "invalid_jwe")
        /// Authenticated decryption failed: wrong key, or the data was altered.
        public static let authenticationFailed = Code(rawValue: "authentication_failed")
        /// An argument has the wrong length or format.
        public static let invalidInput = Code(rawValue: "invalid_input")
        /// A certificate could not be parsed.
        public static let invalidCertificate = Code(rawValue: "invalid_certificate")
        /// OpenSSL reported an internal failure.
        public static let openSSL = Code(rawValue: "openssl")
    }

    /// The kind of failure.
    public var code: Code
    /// What failed and what to do; never contains key material.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
