import Contract
import HTTP

/// Speaks one issuer's wire format: a validated request in, an HTTP exchange, an `IssuerAnswer` out.
///
/// Adapters are pure: they build requests and read responses, and never send anything themselves.
/// `IssuerClient` sends, times and retries. Requests are built without a timeout (`timeoutMs` is
/// 0); the client sets it from the deadline budget on every send.
public protocol IssuerAdapter: Sendable {
    /// The endpoint the adapter was made for.
    var endpoint: IssuerEndpoint { get }

    /// The provisioning (or payment) call for `request`, without timeout and without per-send
    /// headers (see `prepareForSending`).
    func makeRequest(for request: ProvisioningRequest) throws(IssuerRequestError) -> HTTPClientRequest

    /// The request as it goes on the wire at wall time `nowMs`. Called once per HTTP send, retries
    /// included, so per-send values (DCS timestamp, nonce and signature) are fresh every time.
    func prepareForSending(_ request: HTTPClientRequest, nowMs: Int64) -> HTTPClientRequest

    /// What the issuer's answer to `request` means. Success bodies are checked against CONTRACT
    /// section 9 (`ProvisioningPayload.answer(for:issuer:)`); payload values are kept byte for byte.
    func answer(for response: HTTPClientResponse, to request: ProvisioningRequest) -> IssuerAnswer

    /// The state query that tells whether an indeterminate call was applied, or `nil` when the
    /// issuer has none (then reconciliation answers `noStateAPI`).
    func makeStateQuery(for query: ReconcileQuery) -> HTTPClientRequest?

    /// What the state query's answer says about the call.
    func reconcileAnswer(for response: HTTPClientResponse, to query: ReconcileQuery) -> ReconcileAnswer
}

extension IssuerAdapter {
    /// The issuer this adapter speaks to.
    public var issuer: IssuerKind { endpoint.kind }

    /// No per-send headers by default.
    public func prepareForSending(_ request: HTTPClientRequest, nowMs: Int64) -> HTTPClientRequest { request }

    /// No state API by default.
    public func makeStateQuery(for query: ReconcileQuery) -> HTTPClientRequest? { nil }

    /// No state API by default.
    public func reconcileAnswer(for response: HTTPClientResponse, to query: ReconcileQuery) -> ReconcileAnswer {
        .noStateAPI
    }
}
