import Contract
import HTTP
import Issuers
import Simulator
import Testing

/// An in-process simulator on a free loopback port, a real `HTTPClient` and the `IssuerClient`
/// under test, with the simulator's demo programs as endpoints.
final class SimulatorFixture: Sendable {
    let simulator: IssuerSimulator
    let http: HTTPClient
    let client: IssuerClient
    let base: String

    init(profile: SimulatorProfile = SimulatorProfile(), httpConfiguration: HTTPClientConfiguration = HTTPClientConfiguration(),
         clock: @escaping @Sendable () -> Int64 = WallClock.nowMs) throws {
        simulator = try IssuerSimulator(host: "127.0.0.1", port: 0, profile: profile)
        base = "http://127.0.0.1:\(simulator.port)"
        http = HTTPClient(configuration: httpConfiguration)
        client = IssuerClient(http: http, clock: clock)
    }

    deinit {
        http.shutdown()
        simulator.stop()
    }

    /// The demo program of `kind` (CONTRACT section 10 credentials) at `base` (default: the simulator).
    func endpoint(_ kind: IssuerKind, base: String? = nil, minimumBudgetMs: Int64 = 100) -> IssuerEndpoint {
        let root = base ?? self.base
        let credentials: IssuerCredentials
        switch kind {
        case .imprint: credentials = IssuerCredentials(apiKey: Sensitive("sim-imprint-key"))
        case .dcs: credentials = IssuerCredentials(apiKey: Sensitive("sim-dcs-key"), apiSecret: Sensitive("sim-dcs-secret"))
        case .gnosis: credentials = IssuerCredentials(apiKey: Sensitive("sim-gnosis-token"))
        case .worldpay: credentials = IssuerCredentials(apiKey: Sensitive("sim-worldpay-key"))
        }
        return IssuerEndpoint(program: "demo-\(kind.rawValue)", kind: kind, baseURL: "\(root)/\(kind.rawValue)",
                              credentials: credentials, minimumBudgetMs: minimumBudgetMs)
    }

    /// Provisions with `budgetMs` left before publishBy; returns the report and the wall time taken.
    func provision(_ request: ProvisioningRequest, _ endpoint: IssuerEndpoint, budgetMs: Int64 = 5_000) async
        -> (report: IssuerCallReport, elapsedMs: Double, publishByMs: Int64) {
        let timed = await provisionTimed(request, endpoint, budgetMs: budgetMs)
        return (timed.report, timed.elapsedMs, timed.publishByMs)
    }

    /// As `provision`, plus the wall time at which the completion ran (read inside the callback,
    /// before the hop back to the test's task).
    func provisionTimed(_ request: ProvisioningRequest, _ endpoint: IssuerEndpoint, budgetMs: Int64) async
        -> (report: IssuerCallReport, elapsedMs: Double, publishByMs: Int64, completedAtMs: Int64) {
        let publishBy = WallClock.nowMs() + budgetMs
        let start = WallClock.monotonicMs()
        let (report, completedAt, finished): (IssuerCallReport, Int64, Double) = await withCheckedContinuation { continuation in
            client.provision(request, endpoint: endpoint, publishByMs: publishBy) { report in
                continuation.resume(returning: (report, WallClock.nowMs(), WallClock.monotonicMs()))
            }
        }
        return (report, finished - start, publishBy, completedAt)
    }

    /// `GET /_sim/calls` over HTTP: the lines for `cardID` (every handshake).
    func calls(cardID: String) async throws -> [SimulatorCall] {
        let response = try await http.execute(HTTPClientRequest(method: "GET", url: base + "/_sim/calls", timeoutMs: 5_000)).get()
        let document = try JSONParser().parse(response.body)
        let lines = try #require(document["calls"]?.arrayValue)
        return lines.compactMap { line in
            guard let card = line["card_id"]?.stringValue, card == cardID else { return nil }
            return SimulatorCall(issuer: line["issuer"]?.stringValue ?? "", cardID: card, handshake: line["handshake"]?.stringValue ?? "",
                                 count: Int(line["count"]?.int64Value ?? 0))
        }
    }

    /// Total calls the simulator counted for `cardID`.
    func callCount(cardID: String) async throws -> Int {
        try await calls(cardID: cardID).reduce(0) { $0 + $1.count }
    }

    // MARK: Requests from a simulated device

    static func appleRequest(_ handshake: SimulatedAppleHandshake, card: String, userID: String? = nil, last4: String? = nil,
                             deviceType: String = "iphone") -> ProvisioningRequest {
        ProvisioningRequest(requestID: "req-\(card)", program: "demo", wallet: .applePay,
                            card: CardReference(id: Sensitive(card), last4: last4.flatMap(CardLast4.init), userID: userID.map(Sensitive.init)),
                            apple: handshake.passKitHandshake(deviceType: deviceType))
    }

    static func googleRequest(_ handshake: SimulatedGoogleHandshake, wallet: Wallet, card: String, userID: String? = nil,
                              last4: String? = nil) -> ProvisioningRequest {
        ProvisioningRequest(requestID: "req-\(card)", program: "demo", wallet: wallet,
                            card: CardReference(id: Sensitive(card), last4: last4.flatMap(CardLast4.init), userID: userID.map(Sensitive.init)),
                            google: handshake.walletHandshake)
    }

    static func paymentRequest(reference: String, amount: Int64 = 250, autoSettle: Bool = false,
                               agreement: CustomerAgreement? = nil) -> ProvisioningRequest {
        ProvisioningRequest(requestID: "req-\(reference)", program: "demo", kind: .payment, wallet: .applePay,
                            card: CardReference(id: Sensitive("backend-card")),
                            payment: PaymentInstruction(transactionReference: reference, amount: PaymentAmount(currency: "GBP", value: amount),
                                                        walletToken: Sensitive(SimulatedDevice.applePayToken()), narrative: "Mind Palace",
                                                        autoSettle: autoSettle, customerAgreement: agreement))
    }

    /// A unique card id with an optional magic suffix.
    static func card(_ suffix: String = "") -> String {
        "card_" + Crypto.hex(Crypto.randomBytes(5)) + suffix
    }
}
