/// Why a byte sequence is not an acceptable JSON document.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; extensible.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as text, e.g. `invalid_utf8`.
        public var rawValue: String
        /// Creates a code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code as text.
        public var description: String { rawValue }

        /// The input is not well-formed UTF-8 (RFC 3629), or starts with a byte order mark.
        public static let invalidUTF8 = Code(rawValue: "invalid_utf8")
        /// The input breaks the RFC 8259 grammar.
        public static let syntax = Code(rawValue: "syntax")
        /// Arrays and objects are nested deeper than the parser's limit.
        public static let tooDeep = Code(rawValue: "too_deep")
        /// The input is longer than the parser's limit.
        public static let tooLarge = Code(rawValue: "too_large")
        /// An object names the same key twice.
        public static let duplicateKey = Code(rawValue: "duplicate_key")
    }

    /// The kind of failure.
    public var code: Code
    /// Byte offset where the problem was found.
    public var offset: Int
    /// What is wrong and what to do; never quotes the input.
    public var message: String

    /// `code at byte N: message`.
    public var description: String { "\(code) at byte \(offset): \(message)" }
}
