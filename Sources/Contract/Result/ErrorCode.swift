/// The normalized error code in results (CONTRACT section 4): one set for every issuer.
///
/// Additions beyond CONTRACT section 4 (documented in docs/CONTRACT-NOTES.md): `payment_refused`
/// (Worldpay refused the payment) and `kind_unsupported` (a payment for a provisioning-only issuer,
/// or provisioning for Worldpay).
public enum ErrorCode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The request breaks the contract; the message names the field.
    case invalidRequest = "invalid_request"
    /// No program of that name is configured.
    case unknownProgram = "unknown_program"
    /// The wallet is not one we or the issuer support.
    case walletUnsupported = "wallet_unsupported"
    /// The Apple nonce was already used.
    case nonceReused = "nonce_reused"
    /// The issuer rejected our credentials.
    case unauthenticated
    /// Our credentials lack a permission.
    case permissionDenied = "permission_denied"
    /// The card does not exist, or belongs to another program.
    case cardNotFound = "card_not_found"
    /// The card is frozen, cancelled or not activated.
    case cardNotActive = "card_not_active"
    /// The device cannot take this card.
    case deviceIneligible = "device_ineligible"
    /// The deadline passed before the issuer could be called.
    case deadlineExceeded = "deadline_exceeded"
    /// The issuer did not answer in time after the request was sent.
    case issuerTimeout = "issuer_timeout"
    /// The issuer could not be reached or said it is unavailable.
    case issuerUnavailable = "issuer_unavailable"
    /// The issuer throttled us.
    case rateLimited = "rate_limited"
    /// The issuer failed or answered something we cannot use.
    case upstreamError = "upstream_error"
    /// Worldpay refused the payment (addition for payments).
    case paymentRefused = "payment_refused"
    /// The issuer does not handle this kind of request (addition for payments).
    case kindUnsupported = "kind_unsupported"

    /// The wire name.
    public var description: String { rawValue }
}
