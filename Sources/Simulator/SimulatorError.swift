/// A failure of the issuer simulator: it could not start, a profile is invalid, or minting a
/// simulated device's keys and certificates failed.
public struct SimulatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; extensible.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text.
        public var rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code as text.
        public var description: String { rawValue }

        /// The listen address is invalid or the port cannot be bound.
        public static let listen = Code(rawValue: "listen")
        /// A load profile is not valid JSON or breaks the profile format.
        public static let invalidProfile = Code(rawValue: "invalid_profile")
        /// A profile file cannot be read.
        public static let unreadableProfile = Code(rawValue: "unreadable_profile")
        /// Key generation, certificate creation or signing failed inside OpenSSL.
        public static let crypto = Code(rawValue: "crypto")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do; one line, never a secret.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
