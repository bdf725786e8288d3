import Contract
import HTTP
import Simulator
import Testing

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct Worldpay {
        static let key = "sim-worldpay-key"

        static func payment(_ reference: String, amount: Int64 = 250, autoSettle: Bool = false, agreement: Bool = false,
                            token: String = SimulatedDevice.applePayToken()) -> JSONValue {
            var instruction: [String: JSONValue] = [
                "requestAutoSettlement": .object(["enabled": .bool(autoSettle)]),
                "narrative": .object(["line1": .string("Mind Palace")]),
                "value": .object(["currency": .string("GBP"), "amount": .integer(amount)]),
                "paymentInstrument": .object(["type": .string("card/wallet+applepay"), "walletToken": .string(token)]),
            ]
            if agreement {
                instruction["customerAgreement"] = .object(["type": .string("subscription"), "storedCardUsage": .string("first")])
            }
            return .object(["transactionReference": .string(reference), "merchant": .object(["entity": .string("default")]),
                            "instruction": .object(instruction), "channel": .string("ecom")])
        }

        static func authorize(_ harness: SimulatorHarness, _ body: JSONValue, key: String = key) async throws -> HTTPClientResponse {
            try await harness.send("POST", "/worldpay/cardPayments/customerInitiatedTransactions", headers: SimulatorHarness.bearer(key), json: body)
        }

        /// Follows an absolute link href from the simulator.
        static func follow(_ harness: SimulatorHarness, _ href: String, method: String, body: JSONValue? = nil) async throws -> HTTPClientResponse {
            #expect(href.hasPrefix(harness.base + "/worldpay/payments/"))
            let path = String(href.dropFirst(harness.base.count))
            if let body { return try await harness.send(method, path, headers: SimulatorHarness.bearer(key), json: body) }
            return try await harness.send(method, path, headers: SimulatorHarness.bearer(key))
        }

        static func lastEvent(_ harness: SimulatorHarness, _ reference: String) async throws -> HTTPClientResponse {
            try await harness.send("GET", "/worldpay/payments/events?transactionReference=\(reference)", headers: SimulatorHarness.bearer(key))
        }

        @Test func authorizeThenSettleFollowsTheLinks() async throws {
            let harness = try SimulatorHarness()
            let response = try await Self.authorize(harness, Self.payment("ref-1"))
            #expect(response.status == 201)
            let body = try SimulatorHarness.json(response)
            #expect(body["outcome"]?.stringValue == "authorized")
            let instrument = try #require(body["paymentInstrument"])
            #expect(instrument["type"]?.stringValue == "card/network+masked")
            #expect(instrument["lastFour"]?.stringValue?.count == 4)
            #expect(instrument["tokenNumber"]?.stringValue?.contains("******") == true)
            let masked = MaskedPaymentInstrument(worldpay: instrument)
            #expect(masked.cardBrand == "visa" && masked.expiryYear != nil)
            let links = PaymentLinks(worldpayLinks: body["_links"])
            let settle = try #require(links.settle?.revealed)
            #expect(links.partialSettle != nil && links.cancel != nil && links.events != nil)
            #expect(body["_links"]?["tokens:token"] == nil)

            let events = try await Self.follow(harness, try #require(links.events?.revealed), method: "GET")
            #expect(try SimulatorHarness.json(events)["lastEvent"]?.stringValue == "authorized")
            let settled = try await Self.follow(harness, settle, method: "POST")
            #expect(settled.status == 202)
            #expect(try SimulatorHarness.json(settled)["outcome"]?.stringValue == "sentForSettlement")
            #expect(try SimulatorHarness.json(try await Self.lastEvent(harness, "ref-1"))["lastEvent"]?.stringValue == "settled")
            let cancelAfterSettle = try await Self.follow(harness, try #require(links.cancel?.revealed), method: "POST")
            #expect(cancelAfterSettle.status == 409)
            #expect(try SimulatorHarness.json(cancelAfterSettle)["errorName"]?.stringValue == "invalidPaymentState")
        }

        @Test func cancelThenSettleConflicts() async throws {
            let harness = try SimulatorHarness()
            let links = PaymentLinks(worldpayLinks: try SimulatorHarness.json(try await Self.authorize(harness, Self.payment("ref-c")))["_links"])
            let cancelled = try await Self.follow(harness, try #require(links.cancel?.revealed), method: "POST")
            #expect(cancelled.status == 202)
            #expect(try SimulatorHarness.json(cancelled)["outcome"]?.stringValue == "sentForCancellation")
            let settle = try await Self.follow(harness, try #require(links.settle?.revealed), method: "POST")
            #expect(settle.status == 409)
            let query = try SimulatorHarness.json(try await Self.lastEvent(harness, "ref-c"))
            #expect(query["lastEvent"]?.stringValue == "cancelled")
            #expect(query["_links"]?["cardPayments:settle"] == nil)
            #expect(query["_links"]?["cardPayments:events"] != nil)
        }

        @Test func partialSettlementsUpToTheAuthorizedAmount() async throws {
            let harness = try SimulatorHarness()
            let links = PaymentLinks(worldpayLinks: try SimulatorHarness.json(try await Self.authorize(harness, Self.payment("ref-p", amount: 1000)))["_links"])
            let partial = try #require(links.partialSettle?.revealed)
            func value(_ amount: Int64, _ currency: String = "GBP") -> JSONValue {
                .object(["value": .object(["amount": .integer(amount), "currency": .string(currency)])])
            }
            let first = try await Self.follow(harness, partial, method: "POST", body: value(400))
            #expect(first.status == 202)
            #expect(try SimulatorHarness.json(try await Self.lastEvent(harness, "ref-p"))["lastEvent"]?.stringValue == "partiallySettled")
            #expect(try await Self.follow(harness, partial, method: "POST", body: value(700)).status == 400)
            #expect(try await Self.follow(harness, partial, method: "POST", body: value(100, "EUR")).status == 400)
            #expect(try await Self.follow(harness, partial, method: "POST", body: .object([:])).status == 400)
            #expect(try await Self.follow(harness, try #require(links.cancel?.revealed), method: "POST").status == 409)
            #expect(try await Self.follow(harness, partial, method: "POST", body: value(600)).status == 202)
            #expect(try SimulatorHarness.json(try await Self.lastEvent(harness, "ref-p"))["lastEvent"]?.stringValue == "settled")
        }

        @Test func refusedAutoSettledAndAgreementShapes() async throws {
            let harness = try SimulatorHarness()
            let refused = try await Self.authorize(harness, Self.payment("ref-9-refused"))
            #expect(refused.status == 201)
            let refusedBody = try SimulatorHarness.json(refused)
            #expect(refusedBody["outcome"]?.stringValue == "refused")
            #expect(refusedBody["refusalCode"]?.stringValue?.isEmpty == false)
            #expect(refusedBody["refusalDescription"]?.stringValue?.isEmpty == false)
            #expect(refusedBody["paymentInstrument"] != nil)
            #expect(refusedBody["_links"] == nil)
            #expect(try SimulatorHarness.json(try await Self.lastEvent(harness, "ref-9-refused"))["lastEvent"]?.stringValue == "refused")

            let auto = try SimulatorHarness.json(try await Self.authorize(harness, Self.payment("ref-auto", autoSettle: true)))
            #expect(auto["outcome"]?.stringValue == "authorized")
            #expect(auto["_links"]?["cardPayments:settle"] == nil)
            #expect(try SimulatorHarness.json(try await Self.lastEvent(harness, "ref-auto"))["lastEvent"]?.stringValue == "settled")

            let agreement = try SimulatorHarness.json(try await Self.authorize(harness, Self.payment("ref-sub", agreement: true)))
            #expect(agreement["_links"]?["tokens:token"]?["href"]?.stringValue != nil)
        }

        @Test func timeoutsAndRecoveryQuery() async throws {
            let harness = try SimulatorHarness()
            let applied = try await Self.authorize(harness, Self.payment("ref-timeout-applied"))
            #expect(applied.status == 504)
            let recovered = try await Self.lastEvent(harness, "ref-timeout-applied")
            #expect(recovered.status == 200)
            let recoveredBody = try SimulatorHarness.json(recovered)
            #expect(recoveredBody["lastEvent"]?.stringValue == "authorized")
            #expect(PaymentLinks(worldpayLinks: recoveredBody["_links"]).settle != nil)

            #expect(try await Self.authorize(harness, Self.payment("ref-timeout-unapplied")).status == 504)
            #expect(try await Self.lastEvent(harness, "ref-timeout-unapplied").status == 404)
            #expect(try await Self.lastEvent(harness, "ref-never").status == 404)

            let flaky = try await Self.authorize(harness, Self.payment("ref-flaky"))
            #expect(flaky.status == 503)
            #expect(try await Self.lastEvent(harness, "ref-flaky").status == 404)
            #expect(try await Self.authorize(harness, Self.payment("ref-flaky")).status == 201)
            let duplicate = try await Self.authorize(harness, Self.payment("ref-flaky"))
            #expect(duplicate.status == 409)
            // Another program cannot see the payment.
            let profile = try SimulatorProfile(json: Array(#"{"programs":{"other-wp":{"issuer":"worldpay","api_key":"other-key"}}}"#.utf8))
            harness.simulator.replaceProfile(profile)
            let foreign = try await harness.send("GET", "/worldpay/payments/events?transactionReference=ref-flaky",
                                                 headers: SimulatorHarness.bearer("other-key"))
            #expect(foreign.status == 404)
        }

        @Test func validationAndAuthentication() async throws {
            let harness = try SimulatorHarness()
            #expect(try await Self.authorize(harness, Self.payment("ref-a"), key: "nope").status == 401)
            #expect(try await harness.send("GET", "/worldpay/payments/events?transactionReference=ref-a").status == 401)
            let notJSON = try await Self.authorize(harness, Self.payment("ref-b", token: "not json"))
            #expect(notJSON.status == 400)
            let body = try SimulatorHarness.json(notJSON)
            #expect(body["errorName"]?.stringValue == "bodyDoesNotMatchSchema")
            #expect(body["validationErrors"]?.arrayValue?.first?["jsonPath"]?.stringValue == "$.instruction.paymentInstrument.walletToken")
            for token in [#"{"version":"EC_v1","data":"AAAA","signature":"AAAA"}"#,
                          #"{"version":"EC_v2","data":"AAAA","signature":"AAAA","header":{}}"#,
                          #"{"version":"EC_v1","data":"","signature":"AAAA","header":{}}"#] {
                #expect(try await Self.authorize(harness, Self.payment("ref-c", token: token)).status == 400)
            }
            guard case .object(var root) = Self.payment("ref-d"), case .object(var instruction)? = root["instruction"] else {
                Issue.record("payment shape")
                return
            }
            instruction["value"] = .object(["currency": .string("GBP")])
            root["instruction"] = .object(instruction)
            let missing = try SimulatorHarness.json(try await Self.authorize(harness, .object(root)))
            #expect(missing["validationErrors"]?.arrayValue?.first?["errorName"]?.stringValue == "fieldIsMissing")
            #expect(missing["validationErrors"]?.arrayValue?.first?["jsonPath"]?.stringValue == "$.instruction.value.amount")
            let tampered = try await harness.send("POST", "/worldpay/payments/settlements/full/eyJrIjoicGF5XzEifQ.AAAA",
                                                  headers: SimulatorHarness.bearer(Self.key))
            #expect(tampered.status == 404)
            // The wallet token's hash identifies the attempt in the call log.
            let token = SimulatedDevice.applePayToken()
            _ = try await Self.authorize(harness, Self.payment("ref-e", token: token))
            let calls = try await harness.calls()
            #expect(calls.contains { $0["card_id"]?.stringValue == "ref-e"
                && $0["handshake"]?.stringValue == SimulatorCall.worldpayHandshake(walletToken: token) })
        }

        @Test func slowAndHangingReferences() async throws {
            let harness = try SimulatorHarness()
            let start = Timing.nowMs()
            #expect(try await Self.authorize(harness, Self.payment("ref-slow-150")).status == 201)
            #expect(Timing.nowMs() - start >= 150)
            let request = HTTPClientRequest(method: "POST", url: harness.base + "/worldpay/cardPayments/customerInitiatedTransactions",
                                            headers: SimulatorHarness.bearer(Self.key), body: JSONWriter.encode(Self.payment("ref-hang")),
                                            timeoutMs: 200)
            guard case .failure(let error) = await harness.client.execute(request) else {
                Issue.record("a hanging reference answered")
                return
            }
            #expect(error.kind == .timedOut)
            #expect(try await Self.lastEvent(harness, "ref-hang").status == 404)
        }
    }
}
