import Contract
import Issuers
import Recovery

/// Every secret-bearing part a worker serves requests with, built from one set of secret values:
/// the issuer endpoints (API keys, DCS secrets), the request authenticator (every program's
/// signing keys, unnamed and named, and the replay key) and the audit pseudonymizer. Immutable:
/// `SecretResolver` swaps in a whole new one when a secret file changes, and a request keeps the
/// one it started with.
struct WorkerSecrets: Sendable {
    /// Issuer endpoint (with its credentials) per program name.
    let endpoints: [String: IssuerEndpoint]
    /// Who may be answered.
    let authenticator: RequestAuthenticator
    /// The audit pseudonym keys.
    let pseudonymKeys: PseudonymKeys
    /// `card_ref` / `device_ref` pseudonyms, with the keys current when these secrets were put
    /// in use (`SecretResolver` builds new ones when a pseudonym key retires).
    let pseudonymizer: Pseudonymizer
    /// When a pseudonym key retires and `pseudonymizer` must be made again (nil: never).
    let pseudonymizerExpiresAtMs: Int64?

    /// Builds the parts from `values`, which holds every source `configuration.secrets` names,
    /// with the keys current at `nowMs`.
    init(configuration: WorkerConfiguration, values: [SecretSource: Sensitive], nowMs: Int64) {
        let value: (SecretSource) -> Sensitive = { values[$0] ?? Sensitive("") }
        var endpoints: [String: IssuerEndpoint] = [:]
        var signing: [String: RequestAuthenticator.Signing] = [:]
        for (name, program) in configuration.programs {
            endpoints[name] = IssuerEndpoint(
                program: name, kind: program.issuer, baseURL: program.baseURL,
                credentials: IssuerCredentials(apiKey: value(program.apiKey), apiSecret: program.apiSecret.map(value),
                                               apiKeyHeader: program.apiKeyHeader),
                timeoutMs: program.timeoutMs, minimumBudgetMs: program.minimumBudgetMs,
                dcsGoogleAPI: DCSGoogleAPI(rawValue: program.dcsGoogleAPI) ?? .v2,
                gnosisProvisionPath: program.gnosisProvisionPath, worldpayMerchantEntity: program.worldpayMerchantEntity)
            if program.signsRequests {
                signing[name] = RequestAuthenticator.Signing(
                    keys: program.signingKeys.map { .init(id: $0.id, secret: value($0.secret), notAfterMs: $0.notAfterMs) },
                    policy: RequestSignature.Policy(maxSkewMs: program.requestSigningMaxSkewMs, acceptsV1: program.requestSigningAcceptsV1,
                                                   acceptsV2: program.requestSigningAcceptsV2))
            }
        }
        self.endpoints = endpoints
        authenticator = RequestAuthenticator(programs: signing, replayKeys: configuration.replayKeyList.map {
            .init(id: $0.id, secret: value($0.secret), notAfterMs: $0.notAfterMs)
        })
        pseudonymKeys = PseudonymKeys(keys: configuration.pseudonymKeyList.map {
            .init(id: $0.id, secret: value($0.secret), notAfterMs: $0.notAfterMs)
        })
        pseudonymizer = pseudonymKeys.pseudonymizer(nowMs: nowMs)
        pseudonymizerExpiresAtMs = pseudonymKeys.keys.compactMap(\.notAfterMs).filter { $0 > nowMs }.min()
    }

    /// The seal on dead letters written at `nowMs`: a MAC with the current replay key, when the
    /// worker has one.
    func deadLetterSeal(nowMs: Int64) -> DeadLetterSeal? { authenticator.deadLetterSeal(nowMs: nowMs) }
}
