/// What the simulator decided for a Worldpay authorization.
enum PaymentOutcome: Sendable {
    /// Authorized (or settled at once with auto settlement): answer 201 with links.
    case authorized(WorldpayPayment)
    /// Refused: answer 201 with a refusal code.
    case refused(WorldpayPayment)
    /// A payment with this reference exists already.
    case duplicate
    /// 503, nothing applied.
    case unavailable
    /// 429 with `Retry-After`.
    case rateLimited(retryAfterSeconds: Int)
    /// 504 (after authorizing for `-timeout-applied`).
    case gatewayTimeout
    /// No answer until `hang_ms`.
    case hang
}
