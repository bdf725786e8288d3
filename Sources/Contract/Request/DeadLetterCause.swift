/// Why a request cannot be answered with a result and goes to the dead-letter topic.
public struct DeadLetterCause: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, used as the `dlq.code` header.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// More than the size limit (64 KiB).
        case oversize
        /// Not well-formed UTF-8.
        case invalidUTF8 = "invalid_utf8"
        /// Not JSON (syntax, duplicate keys, nesting too deep).
        case notJSON = "not_json"
        /// JSON, but not an object.
        case notAnObject = "not_an_object"
        /// A `version` other than 1 (or not an integer).
        case unknownVersion = "unknown_version"
        /// No `request_id`.
        case missingRequestID = "missing_request_id"
        /// A `request_id` that is not 1–64 of `[A-Za-z0-9._:-]`.
        case malformedRequestID = "malformed_request_id"
    }

    /// The kind of failure.
    public var code: Code
    /// Redacted explanation and what to do: never quotes the message.
    public var message: String

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
