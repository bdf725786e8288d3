import Contract
import HTTP
import Issuers
import Simulator
import Testing

/// Every error row of every issuer, over real HTTP against the simulator, mapped to the result's
/// status, code, next action and finality.
@Suite(.timeLimit(.minutes(5))) struct SimulatorErrorRowTests {
    let fixture: SimulatorFixture

    init() throws {
        fixture = try SimulatorFixture()
    }

    private static func faults(unavailable: Double = 0, gatewayTimeout: Double = 0, rateLimited: Double = 0,
                               retryAfterSeconds: Int = 1) -> SimulatorProfile {
        SimulatorProfile(seed: 7, allIssuers: LoadRule(unavailableRate: unavailable, gatewayTimeoutRate: gatewayTimeout,
                                                        rateLimitedRate: rateLimited, retryAfterSeconds: retryAfterSeconds))
    }

    // MARK: Imprint

    @Test(arguments: [
        ("-missing", ExpectedOutcome(status: .rejected, code: .cardNotFound, next: .surfaceError, issuerCode: "payment_method_not_found", httpStatus: 404)),
        ("-foreign", ExpectedOutcome(status: .rejected, code: .cardNotFound, next: .surfaceError, issuerCode: "payment_method_not_found", httpStatus: 404)),
        ("-inactive", ExpectedOutcome(status: .rejected, code: .cardNotActive, next: .surfaceError, issuerCode: "payment_method_not_active", httpStatus: 422)),
        ("-provisioned", ExpectedOutcome(status: .alreadyProvisioned, code: nil, next: .none, issuerCode: "already_provisioned", httpStatus: 409)),
        ("-timeout-unapplied", ExpectedOutcome(status: .indeterminate, code: .issuerTimeout, next: .restartWalletFlow, isFinal: false, httpStatus: 504)),
        ("-timeout-applied", ExpectedOutcome(status: .indeterminate, code: .issuerTimeout, next: .restartWalletFlow, isFinal: false, httpStatus: 504)),
    ])
    func imprintCardRows(suffix: String, expected: ExpectedOutcome) async throws {
        let handshake = try SimulatedDevice().appleHandshake()
        let (report, _, _) = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: SimulatorFixture.card(suffix)),
                                                     fixture.endpoint(.imprint))
        expected.check(report, "Imprint \(suffix)")
    }

    @Test func imprintWalletSpecificNextActions() async throws {
        let device = try SimulatedDevice()
        let upp = await fixture.provision(SimulatorFixture.googleRequest(device.googleHandshake(), wallet: .googleWallet,
                                                                         card: SimulatorFixture.card("-timeout-unapplied")), fixture.endpoint(.imprint))
        ExpectedOutcome(status: .indeterminate, code: .issuerTimeout, next: .restartWalletFlow, isFinal: false, httpStatus: 504)
            .check(upp.report, "UPP 504")
        let legacy = await fixture.provision(SimulatorFixture.googleRequest(device.googleHandshake(opcRequested: false), wallet: .googlePay,
                                                                            card: SimulatorFixture.card("-timeout-unapplied")), fixture.endpoint(.imprint))
        ExpectedOutcome(status: .indeterminate, code: .issuerTimeout, next: .retry, isFinal: false, httpStatus: 504).check(legacy.report, "Legacy 504")
        #expect(legacy.report.outcome.retry == .sameHandshakeAllowed, "Legacy may resend its ids, but the client itself never did")
    }

    @Test func imprintIneligibleDevice() async throws {
        let device = try SimulatedDevice(name: "pixel-ineligible")
        let apple = await fixture.provision(SimulatorFixture.appleRequest(try device.appleHandshake(), card: SimulatorFixture.card()),
                                            fixture.endpoint(.imprint))
        ExpectedOutcome(status: .rejected, code: .deviceIneligible, next: .surfaceError, issuerCode: "device_ineligible", httpStatus: 422)
            .check(apple.report, "Imprint Apple ineligible")
        let google = await fixture.provision(SimulatorFixture.googleRequest(device.googleHandshake(), wallet: .googleWallet, card: SimulatorFixture.card()),
                                             fixture.endpoint(.imprint))
        ExpectedOutcome(status: .rejected, code: .deviceIneligible, next: .surfaceError, issuerCode: "device_ineligible", httpStatus: 422)
            .check(google.report, "Imprint Google ineligible")
    }

    @Test func imprintInvalidRequestAndReusedNonce() async throws {
        let handshake = try SimulatedDevice().appleHandshake()
        let card = SimulatorFixture.card()
        let first = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: card), fixture.endpoint(.imprint))
        #expect(first.report.outcome.status == .provisioned, "\(first.report.summary)")
        let replay = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: SimulatorFixture.card()), fixture.endpoint(.imprint))
        ExpectedOutcome(status: .rejected, code: .invalidRequest, next: .surfaceError, issuerCode: "invalid_request", httpStatus: 400)
            .check(replay.report, "Imprint reused nonce")
        // google_opc_requested without server_session_id (validation would stop it; the issuer does too).
        let google = try SimulatedDevice().googleHandshake(opcRequested: false)
        var request = SimulatorFixture.googleRequest(google, wallet: .googleWallet, card: SimulatorFixture.card())
        request.google?.googleOPCRequested = true
        let invalid = await fixture.provision(request, fixture.endpoint(.imprint))
        ExpectedOutcome(status: .rejected, code: .invalidRequest, next: .surfaceError, issuerCode: "invalid_request", httpStatus: 400)
            .check(invalid.report, "Imprint missing session id")
    }

    @Test func imprintWrongKey() async throws {
        var endpoint = fixture.endpoint(.imprint)
        endpoint.credentials.apiKey = Sensitive("not-the-key")
        let (report, _, _) = await fixture.provision(SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card()),
                                                     endpoint)
        ExpectedOutcome(status: .rejected, code: .unauthenticated, next: .surfaceError, issuerCode: "unauthenticated", httpStatus: 401)
            .check(report, "Imprint 401")
        #expect(!report.outcome.message.contains("not-the-key"))
    }

    @Test func imprintCustomKeyHeader() async throws {
        let program = SimulatorProgram(name: "acme-imprint", issuer: .imprint, apiKey: Sensitive("acme-key"), authHeader: "X-Api-Key")
        let fixture = try SimulatorFixture(profile: SimulatorProfile(programs: [program]))
        var endpoint = fixture.endpoint(.imprint)
        endpoint.credentials = IssuerCredentials(apiKey: Sensitive("acme-key"), apiKeyHeader: "X-Api-Key")
        let (report, _, _) = await fixture.provision(SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card()),
                                                     endpoint)
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
    }

    @Test func imprintGatewayFaults() async throws {
        let unavailable = try SimulatorFixture(profile: Self.faults(unavailable: 1))
        let card = SimulatorFixture.card()
        let (report503, _, _) = await unavailable.provision(SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: card),
                                                            unavailable.endpoint(.imprint))
        ExpectedOutcome(status: .failed, code: .issuerUnavailable, next: .restartWalletFlow, issuerCode: "service_unavailable", httpStatus: 503,
                        attempts: 2).check(report503, "Imprint 503 twice")
        #expect(try await unavailable.callCount(cardID: card) == 2)

        let limited = try SimulatorFixture(profile: Self.faults(rateLimited: 1, retryAfterSeconds: 30))
        let (report429, elapsed, _) = await limited.provision(
            SimulatorFixture.googleRequest(try SimulatedDevice().googleHandshake(opcRequested: false), wallet: .googlePay, card: SimulatorFixture.card()),
            limited.endpoint(.imprint), budgetMs: 2_000)
        ExpectedOutcome(status: .failed, code: .rateLimited, next: .retry, issuerCode: "rate_limited", httpStatus: 429).check(report429, "Imprint 429")
        #expect(elapsed < 500, "Retry-After 30 s does not fit a 2 s budget: answered without waiting (\(elapsed) ms)")
    }

    // MARK: DCS

    @Test(arguments: [
        ("-missing", ExpectedOutcome(status: .rejected, code: .cardNotFound, next: .surfaceError, issuerCode: "CARD_NOT_FOUND", httpStatus: 200)),
        ("-foreign", ExpectedOutcome(status: .rejected, code: .cardNotFound, next: .surfaceError, issuerCode: "CARD_NOT_FOUND", httpStatus: 200)),
        ("-inactive", ExpectedOutcome(status: .rejected, code: .cardNotActive, next: .surfaceError, issuerCode: "CARD_STATUS_INVALID", httpStatus: 200)),
        ("-provisioned", ExpectedOutcome(status: .alreadyProvisioned, code: nil, next: .none, issuerCode: "WALLET_ALREADY_BOUND", httpStatus: 200)),
        ("-timeout-unapplied", ExpectedOutcome(status: .indeterminate, code: .issuerTimeout, next: .restartWalletFlow, isFinal: false, httpStatus: 504)),
    ])
    func dcsCardRows(suffix: String, expected: ExpectedOutcome) async throws {
        let device = try SimulatedDevice()
        // Apple: the magic suffix rides on externalUserId (the Apple API has no card id).
        let apple = await fixture.provision(SimulatorFixture.appleRequest(try device.appleHandshake(), card: "c", userID: SimulatorFixture.card(suffix)),
                                            fixture.endpoint(.dcs))
        expected.check(apple.report, "DCS Apple \(suffix)")
        // Google V2: on cardId.
        let card = SimulatorFixture.card(suffix)
        let google = await fixture.provision(SimulatorFixture.googleRequest(device.googleHandshake(opcRequested: false), wallet: .googleWallet,
                                                                            card: card, userID: "u_1"), fixture.endpoint(.dcs))
        expected.check(google.report, "DCS Google \(suffix)")
    }

    @Test func dcsDeviceParameterAndNonceRows() async throws {
        let ineligible = try SimulatedDevice(name: "phone-ineligible")
        let device = await fixture.provision(SimulatorFixture.appleRequest(try ineligible.appleHandshake(), card: "c", userID: SimulatorFixture.card()),
                                             fixture.endpoint(.dcs))
        ExpectedOutcome(status: .rejected, code: .deviceIneligible, next: .surfaceError, issuerCode: "DEVICE_NOT_ELIGIBLE", httpStatus: 200)
            .check(device.report, "DCS ineligible")

        let shortWallet = SimulatedGoogleHandshake(walletID: "x", deviceID: "device-1", googleOPCRequested: false, serverSessionID: nil)
        let parameter = await fixture.provision(SimulatorFixture.googleRequest(shortWallet, wallet: .googlePay, card: SimulatorFixture.card(), userID: "u"),
                                                fixture.endpoint(.dcs))
        ExpectedOutcome(status: .rejected, code: .invalidRequest, next: .surfaceError, issuerCode: "PARAM_ERROR", httpStatus: 200)
            .check(parameter.report, "DCS PARAM_ERROR")

        let handshake = try SimulatedDevice().appleHandshake()
        let first = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: "c", userID: SimulatorFixture.card()), fixture.endpoint(.dcs))
        #expect(first.report.outcome.status == .provisioned, "\(first.report.summary)")
        let replay = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: "c", userID: SimulatorFixture.card()), fixture.endpoint(.dcs))
        ExpectedOutcome(status: .rejected, code: .invalidRequest, next: .restartWalletFlow, issuerCode: "NONCE_USED", httpStatus: 200)
            .check(replay.report, "DCS NONCE_USED")
    }

    @Test func dcsAuthenticationRows() async throws {
        let request = SimulatorFixture.googleRequest(try SimulatedDevice().googleHandshake(opcRequested: false), wallet: .googleWallet,
                                                     card: SimulatorFixture.card(), userID: "u")
        var wrongKey = fixture.endpoint(.dcs)
        wrongKey.credentials.apiKey = Sensitive("nobody")
        ExpectedOutcome(status: .rejected, code: .unauthenticated, next: .surfaceError, issuerCode: "AUTH_FAILED", httpStatus: 401)
            .check(await fixture.provision(request, wrongKey).report, "DCS AUTH_FAILED")
        var wrongSecret = fixture.endpoint(.dcs)
        wrongSecret.credentials.apiSecret = Sensitive("not-the-secret")
        ExpectedOutcome(status: .rejected, code: .unauthenticated, next: .surfaceError, issuerCode: "SIGN_INVALID", httpStatus: 401)
            .check(await fixture.provision(request, wrongSecret).report, "DCS SIGN_INVALID")
        // A clock 60 s behind: the simulator's 5 s window rejects the timestamp.
        let stale = try SimulatorFixture(clock: { WallClock.nowMs() - 60_000 })
        let publishBy = WallClock.nowMs() - 60_000 + 5_000
        let report = await stale.client.provision(request, endpoint: stale.endpoint(.dcs), publishByMs: publishBy)
        ExpectedOutcome(status: .rejected, code: .unauthenticated, next: .surfaceError, issuerCode: "TIMESTAMP_EXPIRED", httpStatus: 401)
            .check(report, "DCS TIMESTAMP_EXPIRED")
    }

    @Test func dcsGatewayRows() async throws {
        let busy = try SimulatorFixture(profile: Self.faults(rateLimited: 1, retryAfterSeconds: 60))
        let request = SimulatorFixture.googleRequest(try SimulatedDevice().googleHandshake(opcRequested: false), wallet: .googleWallet,
                                                     card: SimulatorFixture.card(), userID: "u")
        ExpectedOutcome(status: .failed, code: .rateLimited, next: .restartWalletFlow, issuerCode: "SYS_BUSY", httpStatus: 429)
            .check(await busy.provision(request, busy.endpoint(.dcs)).report, "DCS SYS_BUSY")
        let down = try SimulatorFixture(profile: Self.faults(unavailable: 1))
        // The simulator's DCS 503 carries SYS_ERROR; retried once (a 503 was not processed), then the outage row:
        // only a 200 envelope is DCS's own SYS_ERROR verdict.
        ExpectedOutcome(status: .failed, code: .issuerUnavailable, next: .restartWalletFlow, issuerCode: "SYS_ERROR", httpStatus: 503, attempts: 2)
            .check(await down.provision(request, down.endpoint(.dcs)).report, "DCS 503 SYS_ERROR")
    }

    @Test func dcsGoogleWalletWithOPCRequestedFailsInsteadOfFallingBack() async throws {
        let request = SimulatorFixture.googleRequest(try SimulatedDevice().googleHandshake(opcRequested: true), wallet: .googleWallet,
                                                     card: SimulatorFixture.card(), userID: "u")
        let (report, _, _) = await fixture.provision(request, fixture.endpoint(.dcs))
        ExpectedOutcome(status: .failed, code: .upstreamError, next: .restartWalletFlow, httpStatus: 200).check(report, "DCS UPP with OPC")
        guard case .invalidSuccessResponse = report.answer else {
            Issue.record("expected an unusable success, got \(report.summary)")
            return
        }
    }

    // MARK: Gnosis Pay

    @Test(arguments: [
        ("-missing", ExpectedOutcome(status: .rejected, code: .cardNotFound, next: .surfaceError, issuerCode: "card_not_found", httpStatus: 404)),
        ("-foreign", ExpectedOutcome(status: .rejected, code: .cardNotFound, next: .surfaceError, issuerCode: "card_not_found", httpStatus: 404)),
        ("-inactive", ExpectedOutcome(status: .rejected, code: .cardNotActive, next: .surfaceError, issuerCode: "card_not_active", httpStatus: 422)),
        ("-provisioned", ExpectedOutcome(status: .alreadyProvisioned, code: nil, next: .none, issuerCode: "already_provisioned", httpStatus: 409)),
        ("-timeout-unapplied", ExpectedOutcome(status: .indeterminate, code: .issuerTimeout, next: .restartWalletFlow, isFinal: false, httpStatus: 504)),
    ])
    func gnosisCardRows(suffix: String, expected: ExpectedOutcome) async throws {
        let (report, _, _) = await fixture.provision(SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card(suffix)),
                                                     fixture.endpoint(.gnosis))
        expected.check(report, "Gnosis \(suffix)")
    }

    @Test func gnosisOtherRows() async throws {
        let ineligible = await fixture.provision(SimulatorFixture.appleRequest(try SimulatedDevice(name: "watch-ineligible").appleHandshake(),
                                                                               card: SimulatorFixture.card()), fixture.endpoint(.gnosis))
        ExpectedOutcome(status: .rejected, code: .deviceIneligible, next: .surfaceError, issuerCode: "device_ineligible", httpStatus: 422)
            .check(ineligible.report, "Gnosis ineligible")
        let handshake = try SimulatedDevice().appleHandshake()
        _ = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: SimulatorFixture.card()), fixture.endpoint(.gnosis))
        let replay = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: SimulatorFixture.card()), fixture.endpoint(.gnosis))
        ExpectedOutcome(status: .rejected, code: .invalidRequest, next: .surfaceError, issuerCode: "invalid_request", httpStatus: 400)
            .check(replay.report, "Gnosis reused nonce")
        var wrongToken = fixture.endpoint(.gnosis)
        wrongToken.credentials.apiKey = Sensitive("expired-token")
        ExpectedOutcome(status: .rejected, code: .unauthenticated, next: .surfaceError, issuerCode: "unauthorized", httpStatus: 401)
            .check(await fixture.provision(SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card()),
                                           wrongToken).report, "Gnosis 401")
        // Google wallets never reach Gnosis Pay.
        let card = SimulatorFixture.card()
        let google = await fixture.provision(SimulatorFixture.googleRequest(try SimulatedDevice().googleHandshake(), wallet: .googleWallet, card: card),
                                             fixture.endpoint(.gnosis))
        ExpectedOutcome(status: .rejected, code: .walletUnsupported, next: .surfaceError, attempts: 0).check(google.report, "Gnosis Google")
        #expect(try await fixture.callCount(cardID: card) == 0)
        let down = try SimulatorFixture(profile: Self.faults(unavailable: 1))
        ExpectedOutcome(status: .failed, code: .issuerUnavailable, next: .restartWalletFlow, issuerCode: "service_unavailable", httpStatus: 503, attempts: 2)
            .check(await down.provision(SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card()),
                                        down.endpoint(.gnosis)).report, "Gnosis 503")
    }

    // MARK: Worldpay

    @Test func worldpayRows() async throws {
        let refused = await fixture.provision(SimulatorFixture.paymentRequest(reference: "order-" + SimulatorFixture.card("-refused")),
                                              fixture.endpoint(.worldpay))
        ExpectedOutcome(status: .refused, code: .paymentRefused, next: .surfaceError, issuerCode: "5", httpStatus: 201).check(refused.report, "refused")
        #expect(refused.report.payment?.refusalCode == "5" && refused.report.payment?.refusalDescription == "Refused")
        #expect(refused.report.payment?.paymentInstrument?.type == "card/network+masked")

        var invalid = SimulatorFixture.paymentRequest(reference: "order-" + SimulatorFixture.card())
        invalid.payment?.narrative = "a narrative far longer than twenty-four characters"
        ExpectedOutcome(status: .rejected, code: .invalidRequest, next: .surfaceError, issuerCode: "bodyDoesNotMatchSchema", httpStatus: 400)
            .check(await fixture.provision(invalid, fixture.endpoint(.worldpay)).report, "Worldpay 400")

        var wrongKey = fixture.endpoint(.worldpay)
        wrongKey.credentials.apiKey = Sensitive("nope")
        ExpectedOutcome(status: .rejected, code: .unauthenticated, next: .surfaceError, issuerCode: "accessDenied", httpStatus: 401)
            .check(await fixture.provision(SimulatorFixture.paymentRequest(reference: "order-" + SimulatorFixture.card()), wrongKey).report, "Worldpay 401")

        ExpectedOutcome(status: .indeterminate, code: .issuerTimeout, next: .none, isFinal: false, httpStatus: 504)
            .check(await fixture.provision(SimulatorFixture.paymentRequest(reference: "order-" + SimulatorFixture.card("-timeout-unapplied")),
                                           fixture.endpoint(.worldpay)).report, "Worldpay 504")

        let provisioning = await fixture.provision(SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: "c"), fixture.endpoint(.worldpay))
        ExpectedOutcome(status: .rejected, code: .kindUnsupported, next: .surfaceError, attempts: 0).check(provisioning.report, "Worldpay provisioning")
    }
}
