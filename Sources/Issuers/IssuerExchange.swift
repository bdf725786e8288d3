import Contract
import HTTP
import Observability

/// One issuer call as `IssuerClient` runs it: how to build each send, how to read the answer, and
/// the limits that decide timeouts and the retry.
struct IssuerExchange: Sendable {
    /// Where the call goes and with which limits.
    var endpoint: IssuerEndpoint
    /// The wallet, for the outcome table.
    var wallet: Wallet
    /// The request kind, for the outcome table.
    var kind: RequestKind
    /// The result must be published by this wall time (epoch milliseconds).
    var publishByMs: Int64
    /// The span the call belongs to: each send names a new child of it in `traceparent`.
    var trace: TraceContext?
    /// The request as sent at a wall time (per-send headers added), without timeout.
    var makeSend: @Sendable (Int64) -> HTTPClientRequest
    /// What an HTTP answer means.
    var interpret: @Sendable (HTTPClientResponse) -> IssuerAnswer

    /// The outcome of `answer` for this call.
    ///
    /// `OutcomeTable` has no row for Worldpay's partial-settlement names yet; they are looked up as
    /// their full-settlement counterparts (status `settled`), while the report keeps the issuer's
    /// outcome verbatim.
    func outcome(for answer: IssuerAnswer) -> Outcome {
        var lookup = answer
        if case .payment(var result) = answer, let alias = Self.settlementAliases[result.outcome] {
            result.outcome = alias
            lookup = .payment(result)
        }
        return OutcomeTable.outcome(for: lookup, issuer: endpoint.kind, wallet: wallet, kind: kind)
    }

    /// Worldpay outcomes the table lacks, and the row they share a meaning with.
    static let settlementAliases = ["sentForPartialSettlement": "sentForSettlement", "partiallySettled": "settled"]

    /// The report of this call once `answer` is its last word: the outcome the table gives it
    /// (with the HTTP status it rests on), the payload or payment, and how the attempts went.
    func report(_ answer: IssuerAnswer, progress: ExchangeProgress) -> IssuerCallReport {
        var payload: ProvisioningPayload?
        var payment: PaymentResult?
        switch answer {
        case .success(let value): payload = value
        case .payment(let result): payment = result
        default: break
        }
        var outcome = self.outcome(for: answer)
        // The result names the HTTP status of the issuer answer it rests on: an error's own, and a
        // success's (or an unusable success's) as received; none for a call that got no answer.
        switch answer {
        case .success, .payment, .invalidSuccessResponse: outcome.httpStatus = outcome.httpStatus ?? progress.lastStatus
        case .issuerError, .transportFailure: break
        }
        return IssuerCallReport(answer: answer, outcome: outcome, payload: payload, payment: payment,
                                issuerMs: Int64(progress.issuerMs.rounded()), attempts: progress.attempts,
                                httpStatus: progress.lastStatus, requestMayHaveBeenSent: progress.mayHaveBeenSent)
    }
}
