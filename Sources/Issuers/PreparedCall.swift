import Contract
import HTTP
import Observability

/// An issuer call built from a request and checked, before anything about it is recorded or
/// sent: `IssuerClient.prepare` throws the `IssuerRequestError` a request that cannot become a
/// call (a payment link to another host, a wallet the issuer does not take) deserves, and
/// `IssuerClient.call` sends what it built.
public struct PreparedCall: Sendable {
    /// Where the call goes and with which limits.
    let endpoint: IssuerEndpoint
    /// The wallet, for the outcome table.
    let wallet: Wallet
    /// The request kind, for the outcome table.
    let kind: RequestKind
    /// The request as sent at a wall time (per-send headers added), without timeout.
    let makeSend: @Sendable (Int64) -> HTTPClientRequest
    /// What an HTTP answer means.
    let interpret: @Sendable (HTTPClientResponse) -> IssuerAnswer
    /// For a payment action: the query that must tie its link to the named authorization first.
    var binding: PaymentLinkBinding? = nil

    /// The exchange that runs this call against `publishByMs`, under the span `trace` (if any).
    func exchange(publishByMs: Int64, trace: TraceContext?) -> IssuerExchange {
        IssuerExchange(endpoint: endpoint, wallet: wallet, kind: kind, publishByMs: publishByMs, trace: trace, makeSend: makeSend,
                       interpret: interpret)
    }
}
