import Contract
import TestSupport
import Testing

@Suite("Request decoding", .timeLimit(.minutes(5)))
struct RequestDecoderTests {
    // MARK: Decoded

    @Test func decodesAnAppleRequest() throws {
        let request = try #require(Fixtures.decoded(Fixtures.appleDocument()))
        #expect(request.version == 1)
        #expect(request.requestID == "req-apple-1")
        #expect(request.program == "demo-imprint")
        #expect(request.kind == .provision)
        #expect(request.wallet == .applePay)
        #expect(request.card.id.revealed == "pm_7Hq2")
        #expect(request.card.last4?.digits == "4242")
        #expect(request.card.userID?.revealed == "u_881")
        let apple = try #require(request.apple)
        #expect(apple.certificates.count == 2)
        #expect(apple.nonce.revealed == Fixtures.nonce)
        #expect(apple.deviceType == "iphone")
        #expect(apple.appVersion == "5.2.0")
        #expect(request.startedAtMs == RFC3339.parse("2026-11-29T10:00:00.000Z"))
        #expect(request.deadlineMs == RFC3339.parse("2026-11-29T10:00:19.000Z"))
        #expect(request.reply?.curve == "P-256")
        #expect(request.google == nil)
    }

    @Test func decodesGoogleRequests() throws {
        let upp = try #require(Fixtures.decoded(Fixtures.googleDocument()))
        #expect(upp.wallet == .googleWallet)
        #expect(upp.google?.googleOPCRequested == true)
        #expect(upp.google?.serverSessionID?.revealed == "session-from-google")
        let legacy = try #require(Fixtures.decoded(Fixtures.googleDocument(wallet: "google_pay")))
        #expect(legacy.wallet == .googlePay)
        #expect(legacy.google?.googleOPCRequested == false)
        #expect(legacy.google?.serverSessionID == nil)
    }

    @Test func decodesPayments() throws {
        let payment = try #require(Fixtures.decoded(Fixtures.paymentDocument())).payment
        #expect(payment?.amount == PaymentAmount(currency: "GBP", value: 250))
        #expect(payment?.customerAgreement?.agreementType == "subscription")
        #expect(payment?.walletToken.revealed == Fixtures.walletToken)
        let action = try #require(Fixtures.decoded(Fixtures.paymentActionDocument(
            action: "partial_settle", amount: .object(["currency": .string("GBP"), "value": .integer(100)])))).paymentAction
        #expect(action?.action == .partialSettle)
        #expect(action?.amount?.value == 100)
    }

    @Test func absentVersionAndKindDefaultAndNullMeansAbsent() throws {
        let document = Fixtures.googleDocument(wallet: "google_pay").removing("version").setting("kind", .null)
            .setting("google.google_opc_requested", .null).setting("started_at", .null)
        let request = try #require(Fixtures.decoded(document))
        #expect(request.version == 1)
        #expect(request.kind == .provision)
        #expect(request.startedAtMs == nil)
    }

    @Test func ignoresUnknownMembers() throws {
        let document = Fixtures.appleDocument().setting("future_field", .object(["x": .integer(1)]))
            .setting("card.colour", .string("blue"))
        #expect(Fixtures.decoded(document) != nil)
    }

    @Test func encodedRequestsDecodeToTheSameRequest() throws {
        for document in [Fixtures.appleDocument(), Fixtures.googleDocument(), Fixtures.paymentDocument(),
                         Fixtures.paymentActionDocument()] {
            let request = try #require(Fixtures.decoded(document))
            let again = try #require(Fixtures.decoded(try JSONParser().parse(request.encodedJSON())))
            #expect(again.encodedJSON() == request.encodedJSON())
            #expect(again.card == request.card)
            #expect(again.apple == request.apple)
            #expect(again.google == request.google)
            #expect(again.payment == request.payment)
            #expect(again.paymentAction == request.paymentAction)
        }
    }

    // MARK: Dead letters

    @Test func deadLettersOversizedMessages() {
        let padding = String(repeating: "x", count: 64 * 1024)
        let bytes = Fixtures.encode(Fixtures.appleDocument().setting("padding", .string(padding)))
        #expect(Fixtures.deadLetter(bytes)?.code == .oversize)
        let exact = Array(repeating: UInt8(ascii: " "), count: 64 * 1024 - 2) + Array("{}".utf8)
        #expect(Fixtures.deadLetter(exact)?.code == .missingRequestID)
    }

    @Test func deadLettersUndecodableMessages() {
        #expect(Fixtures.deadLetter(Array("not json".utf8))?.code == .notJSON)
        #expect(Fixtures.deadLetter(Array(#"{"request_id":"a","request_id":"b"}"#.utf8))?.code == .notJSON)
        #expect(Fixtures.deadLetter([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D])?.code == .invalidUTF8)
        #expect(Fixtures.deadLetter(Array("[1,2]".utf8))?.code == .notAnObject)
        #expect(Fixtures.deadLetter(Array("\"request\"".utf8))?.code == .notAnObject)
        #expect(Fixtures.deadLetter(Array((String(repeating: "[", count: 80) + String(repeating: "]", count: 80)).utf8))?.code == .notJSON)
    }

    @Test(arguments: [JSONValue.integer(2), .integer(0), .string("1"), .number(JSONNumber(literal: "1.0")!), .bool(true)])
    func deadLettersUnknownVersions(_ version: JSONValue) {
        let bytes = Fixtures.encode(Fixtures.appleDocument().setting("version", version))
        #expect(Fixtures.deadLetter(bytes)?.code == .unknownVersion)
    }

    @Test func deadLettersMissingOrMalformedRequestIDs() {
        #expect(Fixtures.deadLetter(Fixtures.encode(Fixtures.appleDocument().removing("request_id")))?.code == .missingRequestID)
        for bad: JSONValue in [.string(""), .string("has space"), .string(String(repeating: "a", count: 65)), .integer(7),
                               .string("ü"), .string("a/b")] {
            let cause = Fixtures.deadLetter(Fixtures.encode(Fixtures.appleDocument().setting("request_id", bad)))
            #expect(cause?.code == .malformedRequestID)
        }
        #expect(Fixtures.decoded(Fixtures.appleDocument(requestID: String(repeating: "a", count: 64))) != nil)
        #expect(Fixtures.decoded(Fixtures.appleDocument(requestID: "A.z_0:9-")) != nil)
    }

    @Test func deadLetterMessagesNeverQuoteTheMessage() {
        let cause = Fixtures.deadLetter(Array(#"{"request_id": "secret-marker-9", "x": }"#.utf8))
        #expect(cause?.code == .notJSON)
        #expect(cause?.message.contains("secret-marker-9") == false)
    }

    // MARK: Rejections naming the field

    /// (document edit, expected field path, expected code)
    static let rejections: [(String, JSONValue?, String, ErrorCode)] = [
        ("program", nil, "program", .invalidRequest),
        ("program", .integer(7), "program", .invalidRequest),
        ("program", .string("bad program"), "program", .invalidRequest),
        ("kind", .string("refund"), "kind", .invalidRequest),
        ("wallet", nil, "wallet", .invalidRequest),
        ("wallet", .string("samsung_pay"), "wallet", .walletUnsupported),
        ("wallet", .bool(true), "wallet", .invalidRequest),
        ("card", nil, "card", .invalidRequest),
        ("card", .string("pm_1"), "card", .invalidRequest),
        ("card.id", nil, "card.id", .invalidRequest),
        ("card.id", .integer(42), "card.id", .invalidRequest),
        ("card.id", .string(""), "card.id", .invalidRequest),
        ("card.id", .string("../provision"), "card.id", .invalidRequest),
        ("card.id", .string(".."), "card.id", .invalidRequest),
        ("card.last4", .string("42a2"), "card.last4", .invalidRequest),
        ("card.last4", .integer(4242), "card.last4", .invalidRequest),
        ("card.user_id", .string("u\n1"), "card.user_id", .invalidRequest),
        ("apple", nil, "apple", .invalidRequest),
        ("apple.certificates", nil, "apple.certificates", .invalidRequest),
        ("apple.certificates", .string("MIIB"), "apple.certificates", .invalidRequest),
        ("apple.certificates.1", .integer(1), "apple.certificates[1]", .invalidRequest),
        ("apple.nonce", nil, "apple.nonce", .invalidRequest),
        ("apple.nonce", .array([]), "apple.nonce", .invalidRequest),
        ("apple.nonce_signature", .integer(5), "apple.nonce_signature", .invalidRequest),
        ("apple.device_type", .integer(1), "apple.device_type", .invalidRequest),
        ("started_at", .string("2026-11-29 10:00:00"), "started_at", .invalidRequest),
        ("deadline", .integer(1_700_000_000_000), "deadline", .invalidRequest),
        ("reply", .string("jwk"), "reply", .invalidRequest),
        ("reply.jwk", nil, "reply.jwk", .invalidRequest),
        ("reply.jwk.x", .integer(1), "reply.jwk.x", .invalidRequest),
    ]

    @Test(arguments: 0..<rejections.count)
    func rejectsAppleDocumentsNamingTheField(_ index: Int) throws {
        let (path, value, field, code) = Self.rejections[index]
        let rejection = try #require(Fixtures.rejection(Fixtures.appleDocument().setting(path, value)))
        #expect(rejection.field == field)
        #expect(rejection.code == code)
        #expect(rejection.message.hasPrefix(field))
        #expect(rejection.requestID == "req-apple-1")
    }

    @Test func rejectionsCarryReadableContext() throws {
        let rejection = try #require(Fixtures.rejection(Fixtures.appleDocument().setting("card.id", .integer(1))))
        #expect(rejection.program == "demo-imprint")
        #expect(rejection.wallet == .applePay)
        #expect(rejection.kind == .provision)
        #expect(rejection.message == "card.id must be a string, not a number; send it as a string")
        let unknownWallet = try #require(Fixtures.rejection(Fixtures.appleDocument().setting("wallet", .string("samsung_pay"))))
        #expect(unknownWallet.wallet == nil)
        let badProgram = try #require(Fixtures.rejection(Fixtures.appleDocument().setting("program", .integer(3))))
        #expect(badProgram.program == nil)
    }

    @Test func rejectsGoogleDocumentsNamingTheField() throws {
        let cases: [(String, JSONValue?, String)] = [
            ("google", nil, "google"),
            ("google.wallet_id", nil, "google.wallet_id"),
            ("google.device_id", .integer(9), "google.device_id"),
            ("google.google_opc_requested", .string("true"), "google.google_opc_requested"),
            ("google.server_session_id", .bool(false), "google.server_session_id"),
        ]
        for (path, value, field) in cases {
            let rejection = try #require(Fixtures.rejection(Fixtures.googleDocument().setting(path, value)))
            #expect(rejection.field == field)
        }
    }

    @Test func rejectsPaymentDocumentsNamingTheField() throws {
        let cases: [(JSONValue, String, JSONValue?, String)] = [
            (Fixtures.paymentDocument(), "payment", nil, "payment"),
            (Fixtures.paymentDocument(), "payment.amount.value", .string("250"), "payment.amount.value"),
            (Fixtures.paymentDocument(), "payment.amount.value", .number(JSONNumber(literal: "2.5")!), "payment.amount.value"),
            (Fixtures.paymentDocument(), "payment.amount.currency", nil, "payment.amount.currency"),
            (Fixtures.paymentDocument(), "payment.wallet_token", .object([:]), "payment.wallet_token"),
            (Fixtures.paymentDocument(), "payment.auto_settle", .string("no"), "payment.auto_settle"),
            (Fixtures.paymentDocument(), "payment.customer_agreement.type", nil, "payment.customer_agreement.type"),
            (Fixtures.paymentActionDocument(), "payment_action", nil, "payment_action"),
            (Fixtures.paymentActionDocument(), "payment_action.action", .string("refund"), "payment_action.action"),
            (Fixtures.paymentActionDocument(), "payment_action.link", nil, "payment_action.link"),
            (Fixtures.paymentActionDocument(), "payment_action.amount", .integer(5), "payment_action.amount"),
        ]
        for (document, path, value, field) in cases {
            let rejection = try #require(Fixtures.rejection(document.setting(path, value)), "\(path)")
            #expect(rejection.field == field)
            #expect(rejection.kind != nil)
        }
    }
}
