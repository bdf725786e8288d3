import Contract

/// One card program: which issuer serves it, where, with which credentials and limits.
public struct ProgramConfiguration: Sendable {
    /// The program name requests carry in `program`.
    public var name: String
    /// The issuer behind it.
    public var issuer: IssuerKind
    /// The issuer API's base URL (no trailing slash).
    public var baseURL: String
    /// `api_key_env` / `api_key_file`: the API key (Imprint, Gnosis token, Worldpay, DCS key).
    public var apiKey: SecretSource
    /// `api_secret_env` / `api_secret_file`: the DCS signing secret.
    public var apiSecret: SecretSource?
    /// Header carrying `Bearer <key>` (Imprint, Gnosis Pay, Worldpay).
    public var apiKeyHeader: String = "Authorization"
    /// Longest single issuer call.
    public var timeoutMs: Int64 = 10_000
    /// Least time a call needs; requests with less time left are answered `expired` without a call.
    public var minimumBudgetMs: Int64 = 500
    /// Calls in flight for this program (its bulkhead); nil: only the global limit.
    public var maxInFlight: Int?
    /// Token bucket toward the issuer; nil: unlimited.
    public var rateLimit: SchedulerSettings.RateLimit?
    /// `max_unsettled`: requests that may wait for or be in an issuer call at once on a worker;
    /// nil: derived from `scheduler.max_pending` (`WorkerConfiguration.maxUnsettled(for:)`).
    public var maxUnsettled: Int?
    /// `duplicate_share`: this program's weight in the duplicate horizon's byte budget.
    public var duplicateShare = 1
    /// DCS Google binding API: `v2` (cardId, default) or `v1` (cardMantissa).
    public var dcsGoogleAPI: String = "v2"
    /// Gnosis Pay provisioning path template (`{id}` is the card id).
    public var gnosisProvisionPath: String = "/api/v1/cards/{id}/apple-pay/provision"
    /// Worldpay `merchant.entity`.
    public var worldpayMerchantEntity: String = "default"
    /// `request_signing.secret_env` / `secret_file`: the program's unnamed signing key (messages
    /// carry no `x-request-key-id`). With it or `requestSigningKeys`, requests must carry a valid
    /// `x-request-signature` HMAC from the program's backend.
    public var requestSigningSecret: SecretSource?
    /// `request_signing.keys`: named signing keys, each accepted until its `not_after`.
    public var requestSigningKeys: [RequestSigningKey] = []
    /// `request_signing.accept_v1`: also accept the legacy v1 signature (value only, no freshness).
    public var requestSigningAcceptsV1 = false
    /// `request_signing.accept_v2`: also accept v2 signatures, which cover no partition (a byte copy
    /// on another partition verifies); for moving producers to v3 only.
    public var requestSigningAcceptsV2 = false
    /// `request_signing.max_skew_ms`: how far `x-request-timestamp` may be from the worker's clock.
    public var requestSigningMaxSkewMs: Int64 = 300_000
    /// `reply_topics`: the reply topics this program's requests may name (names, or prefixes ending
    /// in `*`); nil: `results.reply_topics`. Give a signing program its own, so a message naming
    /// another program cannot be routed to its backends' reply topics.
    public var replyTopics: [String]?

    /// Creates a program with defaults.
    public init(name: String, issuer: IssuerKind, baseURL: String, apiKey: SecretSource) {
        self.name = name
        self.issuer = issuer
        self.baseURL = baseURL
        self.apiKey = apiKey
    }

    /// The issuer endpoint this program calls: its bulkhead and breaker are shared by every
    /// program calling the same issuer at the same base URL.
    public var endpoint: String { "\(issuer.rawValue) \(baseURL)" }
}
