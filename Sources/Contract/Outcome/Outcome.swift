/// What a result says about an issuer answer, a rejection or an expiry.
public struct Outcome: Sendable, Hashable {
    /// Result status.
    public var status: ResultStatus
    /// Normalized code (`nil` on success).
    public var code: ErrorCode?
    /// What the app should do next.
    public var nextAction: NextAction
    /// Whether this is the final result for the request (false: reconciliation follows).
    public var isFinal: Bool
    /// Whether the issuer client may repeat the call.
    public var retry: RetryRule
    /// The issuer's own code, verbatim.
    public var issuerCode: String?
    /// The issuer's HTTP status.
    public var httpStatus: Int?
    /// Our explanation (never the issuer's free text).
    public var message: String

    /// Creates an outcome.
    public init(status: ResultStatus, code: ErrorCode?, nextAction: NextAction, isFinal: Bool, retry: RetryRule,
                issuerCode: String? = nil, httpStatus: Int? = nil, message: String) {
        self.status = status
        self.code = code
        self.nextAction = nextAction
        self.isFinal = isFinal
        self.retry = retry
        self.issuerCode = issuerCode
        self.httpStatus = httpStatus
        self.message = message
    }
}
