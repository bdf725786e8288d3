import Contract

/// Everything the pipeline needs after an issuer call: what the issuer said, what it means, and
/// how the call went.
public struct IssuerCallReport: Sendable {
    /// What the issuer said (the last attempt's answer). `.transportFailure(.abandonedBeforeSend)`
    /// when no attempt was sent.
    public var answer: IssuerAnswer
    /// What the result says: `OutcomeTable.outcome(for: answer, …)`, or a rejection when the
    /// request could not be turned into a call (`IssuerRequestError`, a forged payment link).
    public var outcome: Outcome
    /// The provisioning payload on success.
    public var payload: ProvisioningPayload?
    /// The payment details on a Worldpay answer.
    public var payment: PaymentResult?
    /// Milliseconds spent in HTTP exchanges, every attempt summed (waits between attempts excluded).
    public var issuerMs: Int64
    /// HTTP sends made (0, 1 or 2).
    public var attempts: Int
    /// The last HTTP status received, if any.
    public var httpStatus: Int?
    /// Whether any attempt may have reached the issuer (an HTTP answer, or a failure after the
    /// request started to leave). False only when nothing provably left.
    public var requestMayHaveBeenSent: Bool

    /// Creates a report.
    public init(answer: IssuerAnswer, outcome: Outcome, payload: ProvisioningPayload?, payment: PaymentResult?,
                issuerMs: Int64, attempts: Int, httpStatus: Int?, requestMayHaveBeenSent: Bool) {
        self.answer = answer
        self.outcome = outcome
        self.payload = payload
        self.payment = payment
        self.issuerMs = issuerMs
        self.attempts = attempts
        self.httpStatus = httpStatus
        self.requestMayHaveBeenSent = requestMayHaveBeenSent
    }

    /// The report of a request that could not be turned into a call: nothing sent, a rejection.
    init(rejected error: IssuerRequestError) {
        self.init(answer: .transportFailure(.abandonedBeforeSend),
                  outcome: OutcomeTable.rejection(code: error.code, message: error.message),
                  payload: nil, payment: nil, issuerMs: 0, attempts: 0, httpStatus: nil, requestMayHaveBeenSent: false)
    }
}
