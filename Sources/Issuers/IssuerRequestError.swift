import Contract

/// Why an adapter cannot build an issuer call for a request: the request does not fit the issuer
/// (wallet, kind, a missing field validation should have caught) or the program is misconfigured.
///
/// The message names fields and settings only, never a value.
public struct IssuerRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The normalized code the result carries (`wallet_unsupported`, `kind_unsupported`,
    /// `invalid_request`, `unauthenticated` for missing credentials).
    public var code: ErrorCode
    /// What is wrong and what to do.
    public var message: String

    /// Creates an error.
    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// The code and the message.
    public var description: String { "\(code.rawValue): \(message)" }
}
