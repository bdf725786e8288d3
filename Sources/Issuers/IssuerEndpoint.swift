import Contract

/// One program's issuer: which API, where, with which credentials, time limits and options.
///
/// The pipeline builds it from the program's configuration; `adapter` turns it into the
/// `IssuerAdapter` that speaks that issuer's wire format.
public struct IssuerEndpoint: Sendable, Hashable {
    /// The program name requests carry in `program`.
    public var program: String
    /// The issuer API.
    public var kind: IssuerKind
    /// The API's base URL, e.g. `https://api.example.com` or `http://127.0.0.1:8081/imprint`; a
    /// trailing slash is ignored.
    public var baseURL: String
    /// The program's secrets.
    public var credentials: IssuerCredentials
    /// Longest single HTTP attempt, in milliseconds (default 10 s).
    public var timeoutMs: Int64
    /// Least time an attempt needs; with less left before `publishBy` the call is not sent.
    public var minimumBudgetMs: Int64
    /// DCS: the Google binding API version (`v2` with `cardId` by default, `v1` with `cardMantissa`).
    public var dcsGoogleAPI: DCSGoogleAPI
    /// Gnosis Pay: the provisioning path below `baseURL`; `{id}` stands for the card id.
    public var gnosisProvisionPath: String
    /// Worldpay: `merchant.entity` of every payment.
    public var worldpayMerchantEntity: String

    /// The Gnosis Pay provisioning path we assume (the guide hides it).
    public static let defaultGnosisProvisionPath = "/api/v1/cards/{id}/apple-pay/provision"

    /// Creates an endpoint with the contract's defaults.
    public init(program: String, kind: IssuerKind, baseURL: String, credentials: IssuerCredentials,
                timeoutMs: Int64 = 10_000, minimumBudgetMs: Int64 = 500, dcsGoogleAPI: DCSGoogleAPI = .v2,
                gnosisProvisionPath: String = IssuerEndpoint.defaultGnosisProvisionPath,
                worldpayMerchantEntity: String = "default") {
        self.program = program
        self.kind = kind
        self.baseURL = baseURL
        self.credentials = credentials
        self.timeoutMs = timeoutMs
        self.minimumBudgetMs = minimumBudgetMs
        self.dcsGoogleAPI = dcsGoogleAPI
        self.gnosisProvisionPath = gnosisProvisionPath
        self.worldpayMerchantEntity = worldpayMerchantEntity
    }

    /// The adapter for `kind`, configured with this endpoint.
    public var adapter: any IssuerAdapter {
        switch kind {
        case .imprint: ImprintAdapter(endpoint: self)
        case .dcs: DCSAdapter(endpoint: self)
        case .gnosis: GnosisAdapter(endpoint: self)
        case .worldpay: WorldpayAdapter(endpoint: self)
        }
    }

    /// `baseURL` without a trailing slash, followed by `path` (which starts with `/`).
    public func url(_ path: String) -> String {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }
}
