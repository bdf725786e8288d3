import Contract
import TestSupport
import Testing

@Suite("Results", .timeLimit(.minutes(5)))
struct ProvisioningResultTests {
    let t0: Int64 = 1_795_946_400_000

    @Test func encodesEveryContractKeyInOrder() throws {
        let result = ProvisioningResult(
            requestID: "0f8e6c1a", program: "acme-imprint", issuer: .imprint, wallet: .applePay, kind: .provision,
            status: .provisioned, isFinal: true, code: nil, message: "ok", nextAction: .addToWallet, payload: "h..i.c.t",
            timing: ResultTiming(windowStartMs: t0, deadlineMs: t0 + 19_000, receivedAtMs: t0 + 5, issuerMs: 412,
                                 publishedAtMs: t0 + 450), attempt: 1)
        let text = String(decoding: result.encodedJSON(), as: UTF8.self)
        #expect(text == #"{"version":1,"request_id":"0f8e6c1a","program":"acme-imprint","issuer":"imprint","wallet":"apple_pay","#
            + #""kind":"provision","status":"provisioned","final":true,"code":null,"message":"ok","next_action":"add_to_wallet","#
            + #""issuer_code":null,"http_status":null,"payload":"h..i.c.t","payment":null,"timing":{"window_start":"2026-11-29T10:00:00.000Z","#
            + #""deadline":"2026-11-29T10:00:19.000Z","received_at":"2026-11-29T10:00:00.005Z","issuer_ms":412,"#
            + #""published_at":"2026-11-29T10:00:00.450Z"},"attempt":1}"#)
        #expect(try ProvisioningResult.decode(result.encodedJSON()) == result)
    }

    @Test func rejectionResultsNameTheField() throws {
        let rejection = try #require(Fixtures.rejection(Fixtures.appleDocument().removing("card.id")))
        let result = ProvisioningResult(rejection: rejection, timing: ResultTiming(receivedAtMs: t0))
        #expect(result.status == .rejected)
        #expect(result.code == .invalidRequest)
        #expect(result.isFinal)
        #expect(result.nextAction == .surfaceError)
        #expect(result.message.hasPrefix("card.id"))
        #expect(result.program == "demo-imprint")
        let decoded = try ProvisioningResult.decode(result.encodedJSON())
        #expect(decoded == result)
        #expect(decoded.timing.windowStartMs == nil)
    }

    @Test func validationAndOutcomeResults() throws {
        let request = try #require(Fixtures.decoded(Fixtures.googleDocument(wallet: "google_pay")))
        let failure = ValidationFailure(code: .invalidRequest, field: "google.wallet_id", message: "google.wallet_id must not be blank")
        let rejected = ProvisioningResult(request: request, issuer: .imprint, failure: failure, timing: ResultTiming())
        #expect(rejected.code == .invalidRequest)
        #expect(rejected.wallet == .googlePay)
        let outcome = OutcomeTable.outcome(for: .issuerError(httpStatus: 504, issuerCode: nil, message: nil),
                                           issuer: .imprint, wallet: .googlePay, kind: .provision)
        let indeterminate = ProvisioningResult(request: request, issuer: .imprint, outcome: outcome,
                                               timing: ResultTiming(issuerMs: 30_000), attempt: 2)
        #expect(indeterminate.httpStatus == 504)
        #expect(!indeterminate.isFinal)
        let decoded = try ProvisioningResult.decode(indeterminate.encodedJSON())
        #expect(decoded == indeterminate)
        #expect(decoded.attempt == 2)
    }

    @Test func paymentResultsRoundTrip() throws {
        let body = try JSONParser().parse("""
        {"outcome":"authorized","paymentInstrument":{"type":"card/network+masked","cardBin":"444433","lastFour":"1111",
         "tokenNumber":"444433******1111","countryCode":"GB","expiryDate":{"month":2,"year":2028},"cardBrand":"visa",
         "fundingType":"debit","category":"consumer","issuerName":"VALID_ISSUER","paymentAccountReference":"somePAR"},
         "_links":{"cardPayments:settle":{"href":"https://h/settle"},"cardPayments:partialSettle":{"href":"https://h/partial"},
         "cardPayments:cancel":{"href":"https://h/cancel"},"cardPayments:events":{"href":"https://h/events"}}}
        """)
        let payment = try #require(PaymentResult(worldpayResponse: body))
        #expect(payment.paymentInstrument?.lastFour == "1111")
        #expect(payment.paymentInstrument?.expiryYear == 2028)
        #expect(payment.links?.settle?.revealed == "https://h/settle")
        let request = try #require(Fixtures.decoded(Fixtures.paymentDocument()))
        let outcome = OutcomeTable.outcome(for: .payment(payment), issuer: .worldpay, wallet: .applePay, kind: .payment)
        let result = ProvisioningResult(request: request, issuer: .worldpay, outcome: outcome, payment: payment,
                                        timing: ResultTiming(receivedAtMs: t0))
        let text = String(decoding: result.encodedJSON(), as: UTF8.self)
        #expect(text.contains(#""status":"authorized""#))
        // The action links are capabilities: never in the result in clear, only sealed in `payload`.
        #expect(!text.contains("https://h/") && !text.contains("links"), "links in clear: \(text)")
        #expect(!text.contains("somePAR"))
        #expect(!text.contains("444433******1111"))
        var withoutLinks = result
        withoutLinks.payment?.links = nil
        #expect(try ProvisioningResult.decode(result.encodedJSON()) == withoutLinks)
        let links = try #require(payment.links)
        #expect(try PaymentLinks.decode(plaintext: links.plaintextJSON()) == links)
        #expect(links.tokens == ["settle", "partial", "cancel", "events"])
        #expect(PaymentResult(worldpayResponse: .object([:])) == nil)
    }

    @Test func decodeRejectsBrokenResults() {
        #expect(throws: ContractDecodingError.self) { try ProvisioningResult.decode(Array("[]".utf8)) }
        #expect(throws: ContractDecodingError.self) {
            try ProvisioningResult.decode(Array(#"{"version":1,"request_id":"r","status":"great","final":true,"next_action":"none"}"#.utf8))
        }
        #expect(throws: ContractDecodingError.self) {
            try ProvisioningResult.decode(Array(#"{"version":1,"request_id":"r","status":"failed","next_action":"none"}"#.utf8))
        }
    }
}
