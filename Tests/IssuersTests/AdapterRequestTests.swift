import Contract
import HTTP
import Issuers
import Testing

/// What each adapter puts on the wire: path, headers and the exact body, field by field.
@Suite(.timeLimit(.minutes(5))) struct AdapterRequestTests {
    private func header(_ request: HTTPClientRequest, _ name: String) -> String? {
        HTTPClientResponse(status: 0, headers: request.headers, body: [], elapsedMs: 0).header(name)
    }

    @Test func imprintBodiesPerWallet() throws {
        let adapter = ImprintAdapter(endpoint: Requests.endpoint(.imprint, baseURL: "https://imprint.example/"))
        let apple = try adapter.makeRequest(for: Requests.apple())
        #expect(apple.method == "POST")
        #expect(apple.url == "https://imprint.example/v2/payment_methods/pm_1/provision/apple_pay")
        #expect(Requests.text(apple.body) == #"{"certificates":["TEVBRg==","SU5URVI="],"nonce":"bm9uY2U=","nonce_signature":"c2lnbmF0dXJl"}"#)
        #expect(header(apple, "Authorization") == "Bearer test-key")
        #expect(header(apple, "Content-Type") == "application/json")
        #expect(apple.timeoutMs == 0, "the client sets the timeout from the deadline")

        let upp = try adapter.makeRequest(for: Requests.google(opc: true, session: "sess-1"))
        #expect(upp.url.hasSuffix("/provision/google_wallet"))
        #expect(Requests.text(upp.body)
            == #"{"wallet_id":"3a5f9c21e8b74d6f","device_id":"9b1c7e04f2a8","google_opc_requested":true,"server_session_id":"sess-1"}"#)
        let uppNoOPC = try adapter.makeRequest(for: Requests.google())
        #expect(Requests.text(uppNoOPC.body) == #"{"wallet_id":"3a5f9c21e8b74d6f","device_id":"9b1c7e04f2a8","google_opc_requested":false}"#)
        let legacy = try adapter.makeRequest(for: Requests.google(.googlePay))
        #expect(legacy.url.hasSuffix("/provision/google_pay"))
        #expect(Requests.text(legacy.body) == #"{"wallet_id":"3a5f9c21e8b74d6f","device_id":"9b1c7e04f2a8"}"#)
    }

    @Test func cardIDsCannotEscapeTheirPathSegment() throws {
        let adapter = ImprintAdapter(endpoint: Requests.endpoint(.imprint))
        let sneaky = try adapter.makeRequest(for: Requests.apple(card: "../admin?x=1#f/é"))
        #expect(sneaky.url == "https://issuer.example/v2/payment_methods/..%2Fadmin%3Fx%3D1%23f%2F%C3%A9/provision/apple_pay")
        let dots = try adapter.makeRequest(for: Requests.apple(card: ".."))
        #expect(dots.url == "https://issuer.example/v2/payment_methods/%2E%2E/provision/apple_pay")
    }

    @Test func customKeyHeaderCarriesTheBareKey() throws {
        var endpoint = Requests.endpoint(.imprint)
        endpoint.credentials.apiKeyHeader = "X-Api-Key"
        let request = try ImprintAdapter(endpoint: endpoint).makeRequest(for: Requests.apple())
        #expect(header(request, "X-Api-Key") == "test-key")
        #expect(header(request, "Authorization") == nil)
    }

    @Test func dcsFieldMapping() throws {
        let endpoint = Requests.endpoint(.dcs, secret: "s")
        let apple = try DCSAdapter(endpoint: endpoint).makeRequest(for: Requests.apple(userID: "u_881", last4: "4242"))
        #expect(apple.url == "https://issuer.example/card/v1/apple-bind-wallet")
        #expect(Requests.text(apple.body) == #"{"externalUserId":"u_881","cardMantissa":"4242","applePublicCertificates":["TEVBRg==","SU5URVI="],"appleNonce":"bm9uY2U=","appleNonceSignature":"c2lnbmF0dXJl"}"#)
        #expect(header(apple, "X-DAPI-SIGN") == nil, "signed per send, not when built")

        let v2 = try DCSAdapter(endpoint: endpoint).makeRequest(for: Requests.google(.googlePay, card: "card_9", userID: "u_2", last4: "1111"))
        #expect(v2.url == "https://issuer.example/card/v2/google-bind-wallet")
        #expect(Requests.text(v2.body) == #"{"externalUserId":"u_2","cardId":"card_9","clientCustomerId":"3a5f9c21e8b74d6f","deviceId":"9b1c7e04f2a8"}"#)

        var v1Endpoint = endpoint
        v1Endpoint.dcsGoogleAPI = .v1
        let v1 = try DCSAdapter(endpoint: v1Endpoint).makeRequest(for: Requests.google(card: "card_9", userID: "u_2", last4: "1111"))
        #expect(v1.url == "https://issuer.example/card/v1/google-bind-wallet")
        #expect(Requests.text(v1.body) == #"{"externalUserId":"u_2","cardMantissa":"1111","clientCustomerId":"3a5f9c21e8b74d6f","deviceId":"9b1c7e04f2a8"}"#)
    }

    @Test func dcsRefusesWhatItCannotSend() {
        #expect(throws: IssuerRequestError(code: .invalidRequest, message: "card.user_id is required for DCS (externalUserId)")) {
            try DCSAdapter(endpoint: Requests.endpoint(.dcs, secret: "s")).makeRequest(for: Requests.apple())
        }
        let noSecret = #expect(throws: IssuerRequestError.self) {
            try DCSAdapter(endpoint: Requests.endpoint(.dcs)).makeRequest(for: Requests.apple(userID: "u"))
        }
        #expect(noSecret?.code == .unauthenticated)
        let payment = #expect(throws: IssuerRequestError.self) {
            try DCSAdapter(endpoint: Requests.endpoint(.dcs, secret: "s")).makeRequest(for: Requests.payment())
        }
        #expect(payment?.code == .kindUnsupported)
    }

    @Test func gnosisPathTemplateAndBody() throws {
        var endpoint = Requests.endpoint(.gnosis)
        let request = try GnosisAdapter(endpoint: endpoint).makeRequest(for: Requests.apple(card: "card 7", productType: "premium"))
        #expect(request.url == "https://issuer.example/api/v1/cards/card%207/apple-pay/provision")
        #expect(Requests.text(request.body) == #"{"certificates":["TEVBRg==","SU5URVI="],"nonce":"bm9uY2U=","nonce_signature":"c2lnbmF0dXJl","device_type":"iphone","app_version":"5.2.0","product_type":"premium"}"#)
        #expect(header(request, "Authorization") == "Bearer test-key")
        endpoint.gnosisProvisionPath = "/v2/{id}/wallets/apple"
        let custom = try GnosisAdapter(endpoint: endpoint).makeRequest(for: Requests.apple(card: "c1", deviceType: "apple_watch"))
        #expect(custom.url == "https://issuer.example/v2/c1/wallets/apple")
        #expect(!Requests.text(custom.body).contains("product_type"))
    }

    @Test func gnosisIsApplePayOnly() {
        let error = #expect(throws: IssuerRequestError.self) {
            try GnosisAdapter(endpoint: Requests.endpoint(.gnosis)).makeRequest(for: Requests.google())
        }
        #expect(error?.code == .walletUnsupported)
        let missing = #expect(throws: IssuerRequestError.self) {
            try GnosisAdapter(endpoint: Requests.endpoint(.gnosis)).makeRequest(for: Requests.apple(appVersion: nil))
        }
        #expect(missing?.code == .invalidRequest)
    }

    @Test func worldpayPaymentBody() throws {
        var endpoint = Requests.endpoint(.worldpay)
        endpoint.worldpayMerchantEntity = "shop-1"
        let adapter = WorldpayAdapter(endpoint: endpoint)
        let plain = try adapter.makeRequest(for: Requests.payment(reference: "Memory265-13/08/1876"))
        #expect(plain.url == "https://issuer.example/cardPayments/customerInitiatedTransactions")
        #expect(Requests.text(plain.body) == #"{"transactionReference":"Memory265-13/08/1876","merchant":{"entity":"shop-1"},"instruction":{"requestAutoSettlement":{"enabled":false},"narrative":{"line1":"Mind Palace"},"value":{"currency":"GBP","amount":250},"paymentInstrument":{"type":"card/wallet+applepay","walletToken":"{\"version\":\"EC_v1\",\"data\":\"ZGF0YQ==\"}"}},"channel":"ecom"}"#)
        let recurring = try adapter.makeRequest(for: Requests.payment(autoSettle: true,
                                                                      agreement: CustomerAgreement(agreementType: "subscription", storedCardUsage: "first")))
        let parsed = try JSONParser().parse(recurring.body)
        #expect(parsed["instruction"]?["customerAgreement"]?["type"]?.stringValue == "subscription")
        #expect(parsed["instruction"]?["customerAgreement"]?["storedCardUsage"]?.stringValue == "first")
        #expect(parsed["instruction"]?["requestAutoSettlement"]?["enabled"]?.boolValue == true)
        let provision = #expect(throws: IssuerRequestError.self) { try adapter.makeRequest(for: Requests.apple()) }
        #expect(provision?.code == .kindUnsupported)
    }

    @Test func worldpayFollowsOnlyLinksToItsOwnOrigin() throws {
        let adapter = WorldpayAdapter(endpoint: Requests.endpoint(.worldpay, baseURL: "http://127.0.0.1:8081/worldpay"))
        func action(_ link: String, _ kind: PaymentActionKind = .settle) -> PaymentActionInstruction {
            PaymentActionInstruction(action: kind, link: Sensitive(link), amount: kind == .partialSettle ? PaymentAmount(currency: "GBP", value: 100) : nil,
                                     transactionReference: "order-1")
        }
        let good = try adapter.makeActionRequest(for: action("http://127.0.0.1:8081/worldpay/payments/settlements/full/abc"))
        #expect(good.url == "http://127.0.0.1:8081/worldpay/payments/settlements/full/abc")
        #expect(good.method == "POST" && good.body.isEmpty)
        let partial = try adapter.makeActionRequest(for: action("HTTP://127.0.0.1:8081/worldpay/payments/settlements/partials/abc", .partialSettle))
        #expect(Requests.text(partial.body) == #"{"value":{"amount":100,"currency":"GBP"},"reference":"order-1"}"#)
        for forged in ["http://evil.example:8081/worldpay/payments/settlements/full/abc",
                       "http://127.0.0.1:8082/worldpay/payments/settlements/full/abc",
                       "https://127.0.0.1:8081/worldpay/x",
                       "http://127.0.0.1/worldpay/x",
                       "http://127.0.0.1:8081@evil.example/x",
                       "http://evil.example\\@127.0.0.1:8081/x",
                       "http://127.0.0.1:8081 /x",
                       "file:///etc/passwd",
                       "/worldpay/payments/settlements/full/abc",
                       // The Worldpay host itself, but not this action's payment-actions link.
                       "http://127.0.0.1:8081/worldpay/payments/authorizations/cancellations/abc",
                       "http://127.0.0.1:8081/worldpay/payments/events/abc",
                       "http://127.0.0.1:8081/worldpay/cardPayments/customerInitiatedTransactions",
                       "http://127.0.0.1:8081/payments/settlements/full/abc",
                       "http://127.0.0.1:8081/worldpay/payments/settlements/full/abc/x",
                       "http://127.0.0.1:8081/worldpay/payments/settlements/full/abc?x=1",
                       "http://127.0.0.1:8081/worldpay/payments/settlements/full/%2e%2e",
                       "http://127.0.0.1:8081/worldpay/payments/settlements/full/.."] {
            let error = #expect(throws: IssuerRequestError.self, "\(forged)") { try adapter.makeActionRequest(for: action(forged)) }
            #expect(error?.code == .invalidRequest)
            #expect(error.map { !$0.message.contains("evil") } ?? true, "the message never echoes the link")
        }
        let noAmount = #expect(throws: IssuerRequestError.self) {
            try adapter.makeActionRequest(for: PaymentActionInstruction(action: .partialSettle, link: Sensitive("http://127.0.0.1:8081/w"),
                                                                        transactionReference: "r"))
        }
        #expect(noAmount?.code == .invalidRequest)
        let https = WorldpayAdapter(endpoint: Requests.endpoint(.worldpay, baseURL: "https://Try.Access.Worldpay.com"))
        #expect(throws: Never.self) {
            try https.makeActionRequest(for: action("https://try.access.worldpay.com:443/payments/authorizations/cancellations/x", .cancel))
        }
    }

    @Test func stateQueries() throws {
        let query = ReconcileQuery(requestID: "r", kind: .provision, wallet: .applePay, cardID: Sensitive("pm/1"),
                                   deviceRef: nil, windowStartMs: 0)
        let imprint = try #require(ImprintAdapter(endpoint: Requests.endpoint(.imprint)).makeStateQuery(for: query))
        #expect(imprint.method == "GET" && imprint.url == "https://issuer.example/v2/payment_methods/pm%2F1/wallet_tokens")
        #expect(header(imprint, "Authorization") == "Bearer test-key")
        #expect(DCSAdapter(endpoint: Requests.endpoint(.dcs, secret: "s")).makeStateQuery(for: query) == nil)
        #expect(GnosisAdapter(endpoint: Requests.endpoint(.gnosis)).makeStateQuery(for: query) == nil)
        var payment = query
        payment.kind = .payment
        payment.transactionReference = "order 1&x=2"
        let worldpay = try #require(WorldpayAdapter(endpoint: Requests.endpoint(.worldpay)).makeStateQuery(for: payment))
        #expect(worldpay.url == "https://issuer.example/payments/events?transactionReference=order%201%26x%3D2")
    }

    @Test func deviceRefHashesTheLeafOrTheDeviceID() throws {
        // SHA-256 of the bytes "LEAF" (base64 TEVBRg==) and of "9b1c7e04f2a8", from `sha256sum`.
        #expect(ReconcileQuery.deviceRef(for: Requests.apple()) == "21b04fab319f57c9ab68d5f246a5b6a07145b960907bd327d2dc77534395be69")
        #expect(ReconcileQuery.deviceRef(for: Requests.google()) == "fa73e65225faf5d5b0307d1e414023b4d751744cf3b93e4a334b58b4674804e3")
    }
}
