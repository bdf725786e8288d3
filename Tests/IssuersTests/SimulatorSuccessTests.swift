import Contract
import HTTP
import Issuers
import Simulator
import Testing

/// Success for every issuer × supported wallet over real HTTP, through a recording proxy, so the
/// payload in the report can be compared byte for byte with what the simulator put on the wire.
@Suite(.timeLimit(.minutes(5))) struct SimulatorSuccessTests {
    let fixture: SimulatorFixture
    let proxy: RecordingProxy

    init() throws {
        fixture = try SimulatorFixture()
        proxy = try RecordingProxy(target: fixture.base)
    }

    /// The one exchange the proxy saw, as parsed request and response bodies plus the raw response.
    private func onlyExchange(sourceLocation: SourceLocation = #_sourceLocation) throws
        -> (request: JSONValue, response: JSONValue, raw: [UInt8], exchange: RecordingProxy.Exchange) {
        let exchanges = proxy.exchanges
        try #require(exchanges.count == 1, "expected one HTTP exchange, saw \(exchanges.count)", sourceLocation: sourceLocation)
        let exchange = exchanges[0]
        return (try JSONParser().parse(exchange.request.body), try JSONParser().parse(exchange.response.body),
                exchange.response.body, exchange)
    }

    /// `value` appears in the raw response as a JSON string exactly (no re-encoding on our side).
    private func expectVerbatim(_ value: Sensitive?, in raw: [UInt8], _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let value else {
            Issue.record("\(name) is missing from the report", sourceLocation: sourceLocation)
            return
        }
        let needle = Array(("\"" + value.revealed + "\"").utf8)
        let found = raw.count >= needle.count && (0...(raw.count - needle.count)).contains { start in
            raw[start..<(start + needle.count)].elementsEqual(needle)
        }
        #expect(found, "\(name) differs from the bytes the issuer sent", sourceLocation: sourceLocation)
    }

    private func expectApplePayload(_ report: IssuerCallReport, wire: JSONValue, raw: [UInt8], handshake: SimulatedAppleHandshake,
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard case .apple(let activation, let pass, let ephemeral)? = report.payload else {
            Issue.record("expected an Apple payload: \(report.summary)", sourceLocation: sourceLocation)
            return
        }
        #expect(activation.revealed == wire["activation_data"]?.stringValue ?? wire["activationData"]?.stringValue, sourceLocation: sourceLocation)
        #expect(pass.revealed == wire["encrypted_pass_data"]?.stringValue ?? wire["encryptedPassData"]?.stringValue, sourceLocation: sourceLocation)
        #expect(ephemeral.revealed == wire["ephemeral_public_key"]?.stringValue ?? wire["ephemeralPublicKey"]?.stringValue,
                sourceLocation: sourceLocation)
        for (name, value) in [("activation_data", activation), ("encrypted_pass_data", pass), ("ephemeral_public_key", ephemeral)] {
            expectVerbatim(value, in: raw, name, sourceLocation: sourceLocation)
        }
        // Only the device's leaf key opens the pass data: proof that it reached us untouched.
        let plaintext = try ApplePassDecryptor.decryptJSON(encryptedPassData: pass.revealed, ephemeralPublicKey: ephemeral.revealed,
                                                           leafPrivateKey: handshake.leafPrivateKey)
        #expect(plaintext["nonce"]?.stringValue == handshake.nonce, sourceLocation: sourceLocation)
        #expect(plaintext["nonceSignature"]?.stringValue == handshake.nonceSignature, sourceLocation: sourceLocation)
    }

    @Test func imprintApplePay() async throws {
        let device = try SimulatedDevice()
        let handshake = try device.appleHandshake()
        let (report, _, _) = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: SimulatorFixture.card()),
                                                     fixture.endpoint(.imprint, base: proxy.base))
        #expect(report.outcome.status == .provisioned && report.outcome.nextAction == .addToWallet && report.outcome.isFinal, "\(report.summary)")
        #expect(report.attempts == 1 && report.httpStatus == 200 && report.requestMayHaveBeenSent)
        let (sent, answer, raw, _) = try onlyExchange()
        #expect(sent["certificates"]?.arrayValue?.compactMap(\.stringValue) == handshake.certificates)
        #expect(sent["nonce"]?.stringValue == handshake.nonce && sent["nonce_signature"]?.stringValue == handshake.nonceSignature)
        try expectApplePayload(report, wire: try #require(answer["provisioning_payload"]), raw: raw, handshake: handshake)
    }

    @Test(arguments: [true, false])
    func imprintGoogleWallet(opcRequested: Bool) async throws {
        let handshake = try SimulatedDevice().googleHandshake(opcRequested: opcRequested)
        let (report, _, _) = await fixture.provision(
            SimulatorFixture.googleRequest(handshake, wallet: .googleWallet, card: SimulatorFixture.card()), fixture.endpoint(.imprint, base: proxy.base))
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
        let (sent, answer, raw, _) = try onlyExchange()
        #expect(sent["google_opc_requested"]?.boolValue == opcRequested)
        #expect(sent["server_session_id"]?.stringValue == handshake.serverSessionID)
        guard case .googleWallet(let opaque, let googlePayload)? = report.payload else {
            Issue.record("expected a Google Wallet payload: \(report.summary)")
            return
        }
        let wire = try #require(answer["provisioning_payload"])
        #expect(opaque.revealed == wire["opaque_payment_card"]?.stringValue)
        expectVerbatim(opaque, in: raw, "opaque_payment_card")
        if opcRequested {
            #expect(googlePayload?.revealed == wire["google_provisioning_payload"]?.stringValue)
            expectVerbatim(googlePayload, in: raw, "google_provisioning_payload")
        } else {
            #expect(googlePayload == nil)
        }
    }

    @Test func imprintLegacyGooglePay() async throws {
        let handshake = try SimulatedDevice().googleHandshake(opcRequested: false)
        let (report, _, _) = await fixture.provision(
            SimulatorFixture.googleRequest(handshake, wallet: .googlePay, card: SimulatorFixture.card()), fixture.endpoint(.imprint, base: proxy.base))
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
        let (sent, answer, raw, _) = try onlyExchange()
        #expect(sent.objectValue?.keys.sorted() == ["device_id", "wallet_id"])
        guard case .googlePay(let opaque, let network, let walletType, _)? = report.payload else {
            Issue.record("expected a Legacy payload: \(report.summary)")
            return
        }
        let wire = try #require(answer["provisioning_payload"])
        #expect(opaque.revealed == wire["opaque_payment_card"]?.stringValue)
        expectVerbatim(opaque, in: raw, "opaque_payment_card")
        #expect(network == wire["network"]?.stringValue && network == "VISA")
        #expect(walletType == wire["wallet_type"]?.stringValue)
    }

    @Test func dcsApplePay() async throws {
        let handshake = try SimulatedDevice().appleHandshake()
        let request = SimulatorFixture.appleRequest(handshake, card: "unused-by-dcs-apple", userID: "user_" + SimulatorFixture.card(), last4: "4242")
        let (report, _, _) = await fixture.provision(request, fixture.endpoint(.dcs, base: proxy.base))
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
        let (sent, answer, raw, exchange) = try onlyExchange()
        #expect(sent["applePublicCertificates"]?.arrayValue?.compactMap(\.stringValue) == handshake.certificates)
        #expect(sent["appleNonce"]?.stringValue == handshake.nonce && sent["appleNonceSignature"]?.stringValue == handshake.nonceSignature)
        #expect(sent["cardMantissa"]?.stringValue == "4242" && sent["externalUserId"]?.stringValue == request.card.userID?.revealed)
        let signature = DCSSignature.sign(secret: "sim-dcs-secret", apiKey: "sim-dcs-key", timestamp: exchange.request.header("X-DAPI-TIMESTAMP") ?? "",
                                          nonce: exchange.request.header("X-DAPI-NONCE") ?? "", body: exchange.request.body)
        #expect(exchange.request.header("X-DAPI-SIGN") == signature, "signed over the exact bytes sent")
        try expectApplePayload(report, wire: try #require(answer["data"]), raw: raw, handshake: handshake)
    }

    @Test(arguments: [(Wallet.googleWallet, DCSGoogleAPI.v2), (.googlePay, .v2), (.googlePay, .v1), (.googleWallet, .v1)])
    func dcsGoogle(wallet: Wallet, api: DCSGoogleAPI) async throws {
        let handshake = try SimulatedDevice().googleHandshake(opcRequested: false)
        var endpoint = fixture.endpoint(.dcs, base: proxy.base)
        endpoint.dcsGoogleAPI = api
        let card = SimulatorFixture.card()
        let (report, _, _) = await fixture.provision(
            SimulatorFixture.googleRequest(handshake, wallet: wallet, card: card, userID: "user_" + card, last4: "1234"), endpoint)
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
        let (sent, answer, raw, exchange) = try onlyExchange()
        #expect(exchange.request.path.hasSuffix("/card/\(api.rawValue)/google-bind-wallet"))
        #expect(sent["clientCustomerId"]?.stringValue == handshake.walletID && sent["deviceId"]?.stringValue == handshake.deviceID)
        #expect(sent["cardId"]?.stringValue == (api == .v2 ? card : nil))
        #expect(sent["cardMantissa"]?.stringValue == (api == .v1 ? "1234" : nil))
        let data = try #require(answer["data"])
        switch report.payload {
        case .googleWallet(let opaque, let googlePayload)?:
            #expect(wallet == .googleWallet && googlePayload == nil)
            #expect(opaque.revealed == data["opaquePaymentCard"]?.stringValue)
            expectVerbatim(opaque, in: raw, "opaquePaymentCard")
        case .googlePay(let opaque, let network, _, let last4)?:
            #expect(wallet == .googlePay && network == "VISA")
            #expect(opaque.revealed == data["opaquePaymentCard"]?.stringValue && last4 == data["last4"]?.stringValue)
            expectVerbatim(opaque, in: raw, "opaquePaymentCard")
        default:
            Issue.record("expected a Google payload: \(report.summary)")
        }
    }

    @Test func gnosisApplePay() async throws {
        let handshake = try SimulatedDevice().appleHandshake()
        let (report, _, _) = await fixture.provision(SimulatorFixture.appleRequest(handshake, card: SimulatorFixture.card(), deviceType: "apple_watch"),
                                                     fixture.endpoint(.gnosis, base: proxy.base))
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
        let (sent, answer, raw, _) = try onlyExchange()
        #expect(sent["device_type"]?.stringValue == "apple_watch" && sent["app_version"]?.stringValue == "5.2.0")
        #expect(sent["product_type"] == nil)
        try expectApplePayload(report, wire: answer, raw: raw, handshake: handshake)
    }

    @Test func worldpayAuthorization() async throws {
        let reference = "order-" + SimulatorFixture.card()
        let request = SimulatorFixture.paymentRequest(reference: reference, agreement: CustomerAgreement(agreementType: "subscription", storedCardUsage: "first"))
        let (report, _, _) = await fixture.provision(request, fixture.endpoint(.worldpay, base: proxy.base))
        #expect(report.outcome.status == .authorized && report.outcome.isFinal && report.httpStatus == 201, "\(report.summary)")
        let (sent, answer, _, _) = try onlyExchange()
        #expect(sent["instruction"]?["paymentInstrument"]?["walletToken"]?.stringValue == request.payment?.walletToken.revealed)
        #expect(sent["instruction"]?["customerAgreement"]?["type"]?.stringValue == "subscription")
        #expect(sent["channel"]?.stringValue == "ecom" && sent["merchant"]?["entity"]?.stringValue == "default")
        let payment = try #require(report.payment)
        #expect(payment.outcome == "authorized")
        #expect(payment.paymentInstrument?.lastFour == answer["paymentInstrument"]?["lastFour"]?.stringValue)
        #expect(payment.paymentInstrument?.cardBrand == "visa" && payment.paymentInstrument?.type == "card/network+masked")
        #expect(payment.links?.settle?.revealed == answer["_links"]?["cardPayments:settle"]?["href"]?.stringValue)
        #expect(payment.links?.partialSettle?.revealed == answer["_links"]?["cardPayments:partialSettle"]?["href"]?.stringValue)
        #expect(payment.links?.cancel?.revealed == answer["_links"]?["cardPayments:cancel"]?["href"]?.stringValue)
        #expect(payment.links?.events?.revealed == answer["_links"]?["cardPayments:events"]?["href"]?.stringValue)
    }
}
