/// A request that breaks a rule of CONTRACT section 9: answer with a `rejected` result.
public struct ValidationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// `invalid_request`, `wallet_unsupported`, `kind_unsupported` or `nonce_reused`.
    public var code: ErrorCode
    /// The offending field path, e.g. `google.server_session_id`.
    public var field: String
    /// What is wrong and what to do; names the field, never quotes its value.
    public var message: String

    /// Creates a failure.
    public init(code: ErrorCode, field: String, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
