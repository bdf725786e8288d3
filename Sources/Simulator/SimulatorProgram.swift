import Contract

/// A program the simulator knows: its issuer and the credentials that select it.
///
/// Profile JSON (`programs` maps a name to this):
/// `{"issuer":"dcs","api_key":"k","api_secret":"s","auth_header":"Authorization"}`; `api_secret` is
/// required for DCS and not allowed otherwise; `auth_header` (default `Authorization`) names the
/// header carrying `Bearer <key>` (a bare key is accepted in a custom header) for the other issuers;
/// `retiring_api_keys` lists old keys still accepted while callers move to `api_key` (a rotation).
public struct SimulatorProgram: Sendable, Hashable {
    /// The program name, e.g. `demo-imprint`.
    public var name: String
    /// The issuer API it talks to.
    public var issuer: IssuerKind
    /// The API key (Imprint, DCS `X-DAPI-API-KEY`, Worldpay) or bearer token (Gnosis Pay).
    public var apiKey: Sensitive
    /// Old keys still accepted during a rotation, as `apiKey` is (same program, same secret).
    public var retiringAPIKeys: [Sensitive]
    /// The DCS signing secret.
    public var apiSecret: Sensitive?
    /// The header that carries the credential (not used by DCS).
    public var authHeader: String

    /// Creates a program.
    public init(name: String, issuer: IssuerKind, apiKey: Sensitive, apiSecret: Sensitive? = nil,
                authHeader: String = "Authorization", retiringAPIKeys: [Sensitive] = []) {
        self.name = name
        self.issuer = issuer
        self.apiKey = apiKey
        self.retiringAPIKeys = retiringAPIKeys
        self.apiSecret = apiSecret
        self.authHeader = authHeader
    }

    /// Every key that selects this program: `apiKey`, then the retiring ones.
    public var acceptedAPIKeys: [Sensitive] { [apiKey] + retiringAPIKeys }

    /// The programs and credentials of CONTRACT section 10, always known to the simulator.
    public static let defaults: [SimulatorProgram] = [
        SimulatorProgram(name: "demo-imprint", issuer: .imprint, apiKey: Sensitive("sim-imprint-key")),
        SimulatorProgram(name: "demo-dcs", issuer: .dcs, apiKey: Sensitive("sim-dcs-key"), apiSecret: Sensitive("sim-dcs-secret")),
        SimulatorProgram(name: "demo-gnosis", issuer: .gnosis, apiKey: Sensitive("sim-gnosis-token")),
        SimulatorProgram(name: "demo-worldpay", issuer: .worldpay, apiKey: Sensitive("sim-worldpay-key")),
    ]
}
