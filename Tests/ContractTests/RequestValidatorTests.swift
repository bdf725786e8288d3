import Contract
import TestSupport
import Testing

/// CONTRACT section 9, row by row: every rule has a passing and a failing case.
@Suite("Request validation (CONTRACT section 9)", .timeLimit(.minutes(5)))
struct RequestValidatorTests {
    let validator = RequestValidator()

    private func failure(_ document: JSONValue, issuer: IssuerKind, validator: RequestValidator? = nil) throws -> ValidationFailure? {
        let request = try #require(Fixtures.decoded(document), "the document must decode")
        return (validator ?? self.validator).validate(request, issuer: issuer)
    }

    private func expectPasses(_ document: JSONValue, issuer: IssuerKind) throws {
        let failure = try failure(document, issuer: issuer)
        #expect(failure == nil, "\(failure?.message ?? "")")
    }

    private func expectFails(_ document: JSONValue, issuer: IssuerKind, field: String, code: ErrorCode = .invalidRequest,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
        let failure = try #require(try failure(document, issuer: issuer), sourceLocation: sourceLocation)
        #expect(failure.field == field, sourceLocation: sourceLocation)
        #expect(failure.code == code, sourceLocation: sourceLocation)
        #expect(failure.message.hasPrefix(failure.field), sourceLocation: sourceLocation)
    }

    private func certificates(_ names: [String]) -> JSONValue {
        .array(names.map { .string(Fixtures.base64($0)) })
    }

    // MARK: all: well-formed basics (decode) and the valid baseline

    @Test func validBaselinesPass() throws {
        try expectPasses(Fixtures.appleDocument(), issuer: .imprint)
        try expectPasses(Fixtures.appleDocument(), issuer: .gnosis)
        try expectPasses(Fixtures.appleDocument(), issuer: .dcs)
        try expectPasses(Fixtures.googleDocument(), issuer: .imprint)
        try expectPasses(Self.dcsGoogle(), issuer: .dcs)
        try expectPasses(Fixtures.googleDocument(wallet: "google_pay"), issuer: .imprint)
        try expectPasses(Fixtures.paymentDocument(), issuer: .worldpay)
        try expectPasses(Fixtures.paymentActionDocument(), issuer: .worldpay)
    }

    @Test func allBasicsAreCheckedAtDecode() {
        #expect(Fixtures.rejection(Fixtures.appleDocument().removing("card.id"))?.field == "card.id")
        #expect(Fixtures.rejection(Fixtures.appleDocument().setting("program", .integer(1)))?.field == "program")
        #expect(Fixtures.deadLetter(Fixtures.encode(Fixtures.appleDocument().removing("request_id")))?.code == .missingRequestID)
        #expect(Fixtures.decoded(Fixtures.appleDocument()) != nil)
    }

    // MARK: apple_pay certificates

    @Test func certificatesValidChainPasses() throws {
        try expectPasses(Fixtures.appleDocument().setting("apple.certificates", certificates(["leaf.der", "intermediate.der"])),
                         issuer: .imprint)
    }

    @Test(arguments: [
        (["leaf.der"], "apple.certificates"),
        (["leaf.der", "intermediate.der", "root.der"], "apple.certificates"),
        (["intermediate.der", "leaf.der"], "apple.certificates"),
        (["garbage.der", "intermediate.der"], "apple.certificates[0]"),
        (["leaf.der", "garbage.der"], "apple.certificates[1]"),
        (["other-leaf.der", "intermediate.der"], "apple.certificates"),
        (["self-signed-leaf.der", "self-signed-ca.der"], "apple.certificates[1]"),
        (["leaf.der", "root.der"], "apple.certificates[1]"),
        (["impostor-leaf.der", "intermediate.der"], "apple.certificates[0]"),
    ])
    func certificatesBadChainsFail(names: [String], field: String) throws {
        try expectFails(Fixtures.appleDocument().setting("apple.certificates", certificates(names)), issuer: .imprint, field: field)
    }

    @Test func certificatesMustBeStrictBase64() throws {
        let leaf = Fixtures.base64("leaf.der"), intermediate = Fixtures.base64("intermediate.der")
        try #require(leaf.contains("+") || leaf.contains("/"), "the fixture must exercise the URL-safe alphabet")
        try #require(leaf.hasSuffix("="), "the fixture must exercise padding")
        let wrapped = String(leaf.prefix(64)) + "\n" + String(leaf.dropFirst(64))
        let urlSafe = leaf.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        var unpadded = leaf
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        let rawBytes = String(decoding: Fixtures.bytes("leaf.der"), as: UTF8.self)
        for bad in [wrapped, " " + leaf, leaf + "\r\n", urlSafe, unpadded, "", rawBytes] {
            try expectFails(Fixtures.appleDocument().setting("apple.certificates", .array([.string(bad), .string(intermediate)])),
                            issuer: .imprint, field: "apple.certificates[0]")
        }
    }

    @Test func chainVerdictsAreCached() throws {
        let verifier = CertificateChainVerifier(capacity: 2)
        let cached = RequestValidator(chainVerifier: verifier)
        #expect(try failure(Fixtures.appleDocument(), issuer: .imprint, validator: cached) == nil)
        #expect(verifier.cachedCount == 1)
        #expect(try failure(Fixtures.appleDocument(), issuer: .imprint, validator: cached) == nil)
        #expect(verifier.cachedCount == 1)
        let bad = Fixtures.appleDocument().setting("apple.certificates", certificates(["other-leaf.der", "intermediate.der"]))
        #expect(try failure(bad, issuer: .imprint, validator: cached)?.field == "apple.certificates")
        #expect(try failure(bad, issuer: .imprint, validator: cached)?.field == "apple.certificates")
        #expect(verifier.cachedCount == 2)
        _ = verifier.verify(leaf: Fixtures.bytes("self-signed-leaf.der"), intermediate: Fixtures.bytes("self-signed-ca.der"))
        #expect(verifier.cachedCount == 2)  // bounded: the oldest verdict was forgotten
        #expect(verifier.verify(leaf: Fixtures.bytes("leaf.der"), intermediate: Fixtures.bytes("intermediate.der")) == .valid)
    }

    @Test func cachedChainVerdictsAreOnlyReusedInsideTheValidityWindow() {
        // The fixtures are valid from 2026-11-29T23:56:45Z to 2126-11-05T23:56:45Z.
        let (notBefore, notAfter): (Int64, Int64) = (1_795_996_605, 4_949_596_605)
        let verifier = CertificateChainVerifier()
        let (leaf, intermediate) = (Fixtures.bytes("leaf.der"), Fixtures.bytes("intermediate.der"))
        #expect(verifier.verify(leaf: leaf, intermediate: intermediate, nowSeconds: notBefore + 60) == .valid)
        #expect(verifier.verify(leaf: leaf, intermediate: intermediate, nowSeconds: notAfter) == .valid)
        #expect(verifier.checksPerformed == 1)
        // After the leaf's notAfter (and before its notBefore) the cached verdict is not used: checked again.
        _ = verifier.verify(leaf: leaf, intermediate: intermediate, nowSeconds: notAfter + 1)
        _ = verifier.verify(leaf: leaf, intermediate: intermediate, nowSeconds: notBefore - 1)
        #expect(verifier.checksPerformed == 3)
        #expect(verifier.verify(leaf: leaf, intermediate: intermediate, nowSeconds: notBefore + 120) == .valid)
        #expect(verifier.checksPerformed == 3)
        #expect(verifier.cachedCount == 1)
    }

    // MARK: apple_pay nonce and nonce_signature

    @Test func nonceAndSignatureStrictBase64Pass() throws {
        try expectPasses(Fixtures.appleDocument().setting("apple.nonce", .string("3vT9Kw==")), issuer: .imprint)
    }

    @Test(arguments: ["apple.nonce", "apple.nonce_signature"], ["", "3vT9Kw", "3vT9 Kw==", "3vT9Kw==\n", "-_T9Kw==", "raw\u{01}bytes", "nonce!"])
    func nonceAndSignatureMustBeNonEmptyStrictBase64(field: String, value: String) throws {
        try expectFails(Fixtures.appleDocument().setting(field, .string(value)), issuer: .imprint, field: field)
    }

    // MARK: apple_pay nonce single use

    @Test func nonceIsSingleUse() throws {
        let guardian = NonceGuard(horizonMs: 60_000, maxEntries: 100)
        let first = try #require(Fixtures.decoded(Fixtures.appleDocument(requestID: "first")))
        let second = try #require(Fixtures.decoded(Fixtures.appleDocument(requestID: "second")))
        #expect(validator.validate(first, issuer: .imprint, nonceGuard: guardian, nowMs: 1_000) == nil)
        #expect(validator.validate(first, issuer: .imprint, nonceGuard: guardian, nowMs: 1_500) == nil)  // redelivery
        let reuse = validator.validate(second, issuer: .imprint, nonceGuard: guardian, nowMs: 2_000)
        #expect(reuse?.code == .nonceReused)
        #expect(reuse?.field == "apple.nonce")
    }

    @Test func invalidRequestsDoNotConsumeTheirNonce() throws {
        let guardian = NonceGuard()
        let invalid = try #require(Fixtures.decoded(Fixtures.appleDocument(requestID: "bad").removing("reply")))
        #expect(validator.validate(invalid, issuer: .imprint, nonceGuard: guardian, nowMs: 1)?.code == .invalidRequest)
        let valid = try #require(Fixtures.decoded(Fixtures.appleDocument(requestID: "good")))
        #expect(validator.validate(valid, issuer: .imprint, nonceGuard: guardian, nowMs: 2) == nil)
    }

    // MARK: google_wallet

    @Test func googleWalletPasses() throws {
        try expectPasses(Fixtures.googleDocument(), issuer: .imprint)
        try expectPasses(Fixtures.googleDocument().setting("google.google_opc_requested", .bool(false))
            .removing("google.server_session_id"), issuer: .imprint)
        try expectPasses(Fixtures.googleDocument().removing("google.google_opc_requested")
            .removing("google.server_session_id"), issuer: .imprint)
    }

    @Test func googleWalletFailures() throws {
        let document = Fixtures.googleDocument()
        try expectFails(document.setting("google.wallet_id", .string("  ")), issuer: .imprint, field: "google.wallet_id")
        try expectFails(document.setting("google.device_id", .string("")), issuer: .imprint, field: "google.device_id")
        try expectFails(document.removing("google.server_session_id"), issuer: .imprint, field: "google.server_session_id")
        try expectFails(document.setting("google.server_session_id", .string(" ")), issuer: .imprint,
                        field: "google.server_session_id")
        #expect(Fixtures.rejection(document.setting("google.google_opc_requested", .string("true")))?.field
            == "google.google_opc_requested")
    }

    // MARK: google_pay

    @Test func googlePayPassesWithoutSession() throws {
        try expectPasses(Fixtures.googleDocument(wallet: "google_pay"), issuer: .imprint)
        try expectPasses(Fixtures.googleDocument(wallet: "google_pay").setting("google.google_opc_requested", .bool(true)),
                         issuer: .imprint)
    }

    @Test func googlePayFailures() throws {
        let document = Fixtures.googleDocument(wallet: "google_pay")
        try expectFails(document.setting("google.wallet_id", .string("\t")), issuer: .imprint, field: "google.wallet_id")
        try expectFails(document.setting("google.device_id", .string(" ")), issuer: .imprint, field: "google.device_id")
    }

    // MARK: DCS

    /// DCS's Google binding cannot return a Google OPC: its valid baseline asks for none.
    static func dcsGoogle() -> JSONValue {
        Fixtures.googleDocument().setting("google.google_opc_requested", .bool(false)).removing("google.server_session_id")
    }

    @Test func dcsPasses() throws {
        try expectPasses(Self.dcsGoogle().setting("google.wallet_id", .string("ab"))
            .setting("google.device_id", .string(String(repeating: "d", count: 24))), issuer: .dcs)
        try expectPasses(Self.dcsGoogle().setting("google.wallet_id", .string(String(repeating: "w", count: 36)))
            .setting("google.device_id", .string("de")), issuer: .dcs)
        try expectPasses(Fixtures.appleDocument().removing("card.last4"), issuer: .dcs)
    }

    @Test func dcsFailures() throws {
        try expectFails(Fixtures.appleDocument().removing("card.user_id"), issuer: .dcs, field: "card.user_id")
        try expectFails(Self.dcsGoogle().setting("card.user_id", .string(" ")), issuer: .dcs, field: "card.user_id")
        try expectFails(Self.dcsGoogle().setting("google.wallet_id", .string("a")), issuer: .dcs, field: "google.wallet_id")
        try expectFails(Self.dcsGoogle().setting("google.wallet_id", .string(String(repeating: "w", count: 37))),
                        issuer: .dcs, field: "google.wallet_id")
        try expectFails(Fixtures.googleDocument(wallet: "google_pay").setting("google.device_id", .string("d")),
                        issuer: .dcs, field: "google.device_id")
        try expectFails(Self.dcsGoogle().setting("google.device_id", .string(String(repeating: "d", count: 25))),
                        issuer: .dcs, field: "google.device_id")
        // Google asked for an OPC that DCS can never return: refused before the side-effecting call.
        try expectFails(Fixtures.googleDocument(), issuer: .dcs, field: "google.google_opc_requested", code: .walletUnsupported)
        #expect(Fixtures.rejection(Fixtures.appleDocument().setting("card.last4", .string("424")))?.field == "card.last4")
        // The same lengths are fine for Imprint, and user_id is optional there.
        try expectPasses(Fixtures.googleDocument().setting("google.wallet_id", .string("a")).removing("card.user_id"), issuer: .imprint)
    }

    // MARK: Gnosis Pay

    @Test func gnosisPasses() throws {
        try expectPasses(Fixtures.appleDocument(), issuer: .gnosis)
        try expectPasses(Fixtures.appleDocument().setting("apple.device_type", .string("apple_watch"))
            .setting("apple.product_type", .string("standard")), issuer: .gnosis)
    }

    @Test func gnosisFailures() throws {
        try expectFails(Fixtures.googleDocument(), issuer: .gnosis, field: "wallet", code: .walletUnsupported)
        try expectFails(Fixtures.googleDocument(wallet: "google_pay"), issuer: .gnosis, field: "wallet", code: .walletUnsupported)
        try expectFails(Fixtures.appleDocument().setting("apple.device_type", .string("ipad")), issuer: .gnosis,
                        field: "apple.device_type")
        try expectFails(Fixtures.appleDocument().removing("apple.device_type"), issuer: .gnosis, field: "apple.device_type")
        try expectFails(Fixtures.appleDocument().removing("apple.app_version"), issuer: .gnosis, field: "apple.app_version")
        try expectFails(Fixtures.appleDocument().setting("apple.app_version", .string(" ")), issuer: .gnosis,
                        field: "apple.app_version")
        // Imprint does not need device_type or app_version.
        try expectPasses(Fixtures.appleDocument().removing("apple.device_type").removing("apple.app_version"), issuer: .imprint)
    }

    // MARK: reply.jwk

    @Test func replyKeyRules() throws {
        try expectFails(Fixtures.appleDocument().removing("reply"), issuer: .imprint, field: "reply.jwk")
        let lenient = RequestValidator(policy: ValidationPolicy(requireEncryption: false))
        #expect(try failure(Fixtures.appleDocument().removing("reply"), issuer: .imprint, validator: lenient) == nil)
        let x = try #require(Fixtures.replyJWK["x"]?.stringValue)
        try expectFails(Fixtures.appleDocument().setting("reply.jwk.y", .string(x)), issuer: .imprint, field: "reply.jwk")
        try expectFails(Fixtures.appleDocument().setting("reply.jwk.x", .string("AAAA")), issuer: .imprint, field: "reply.jwk")
        try expectFails(Fixtures.appleDocument().setting("reply.jwk.crv", .string("P-384")), issuer: .imprint, field: "reply.jwk.crv")
        try expectFails(Fixtures.appleDocument().setting("reply.jwk.kty", .string("RSA")), issuer: .imprint, field: "reply.jwk.kty")
        try expectFails(Fixtures.appleDocument().setting("reply.jwk.y", nil), issuer: .imprint, field: "reply.jwk.y")
        // X25519 (RFC 8037 OKP) keys: x only, not of small order.
        let x25519 = Fixtures.appleDocument().setting("reply.jwk", try X25519PrivateKey.generate().publicKey.jsonValue)
        try expectPasses(x25519, issuer: .imprint)
        try expectFails(x25519.setting("reply.jwk.y", .string(x)), issuer: .imprint, field: "reply.jwk.y")
        try expectFails(x25519.setting("reply.jwk.crv", .string("P-256")), issuer: .imprint, field: "reply.jwk.crv")
        try expectFails(Fixtures.appleDocument().setting("reply.jwk.crv", .string("X25519")), issuer: .imprint, field: "reply.jwk.crv")
        try expectFails(x25519.setting("reply.jwk.x", .string("AAAA")), issuer: .imprint, field: "reply.jwk")
        // u = 0 and u = 1 are of small order: every shared secret with them is zero.
        try expectFails(x25519.setting("reply.jwk.x", .string(Crypto.base64URLEncode([UInt8](repeating: 0, count: 32)))),
                        issuer: .imprint, field: "reply.jwk")
        try expectFails(x25519.setting("reply.jwk.x", .string(Crypto.base64URLEncode([1] + [UInt8](repeating: 0, count: 31)))),
                        issuer: .imprint, field: "reply.jwk")
        // Payments carry no payload, so no key is needed.
        try expectPasses(Fixtures.paymentDocument(), issuer: .worldpay)
    }

    // MARK: Payments (Worldpay, section 8)

    @Test func paymentsOnlyThroughWorldpay() throws {
        for issuer in [IssuerKind.imprint, .dcs, .gnosis] {
            try expectFails(Fixtures.paymentDocument(), issuer: issuer, field: "kind", code: .kindUnsupported)
            try expectFails(Fixtures.paymentActionDocument(), issuer: issuer, field: "kind", code: .kindUnsupported)
        }
        try expectFails(Fixtures.appleDocument(), issuer: .worldpay, field: "kind", code: .kindUnsupported)
        try expectFails(Fixtures.paymentDocument().setting("wallet", .string("google_pay")), issuer: .worldpay, field: "wallet",
                        code: .walletUnsupported)
    }

    @Test func paymentFieldRules() throws {
        let document = Fixtures.paymentDocument()
        let cases: [(String, JSONValue?, String)] = [
            ("payment.amount.currency", .string("gbp"), "payment.amount.currency"),
            ("payment.amount.currency", .string("GBPX"), "payment.amount.currency"),
            ("payment.amount.value", .integer(0), "payment.amount.value"),
            ("payment.amount.value", .integer(-5), "payment.amount.value"),
            ("payment.transaction_reference", .string("has space"), "payment.transaction_reference"),
            ("payment.transaction_reference", .string(String(repeating: "r", count: 65)), "payment.transaction_reference"),
            ("payment.narrative", .string(String(repeating: "n", count: 25)), "payment.narrative"),
            ("payment.narrative", .string(" "), "payment.narrative"),
            ("payment.customer_agreement.type", .string("weekly"), "payment.customer_agreement.type"),
            ("payment.customer_agreement.stored_card_usage", .string("second"), "payment.customer_agreement.stored_card_usage"),
            ("payment.wallet_token", .string("not json"), "payment.wallet_token"),
            ("payment.wallet_token", .string("[]"), "payment.wallet_token"),
        ]
        for (path, value, field) in cases {
            try expectFails(document.setting(path, value), issuer: .worldpay, field: field)
        }
        try expectPasses(document.setting("payment.narrative", .string(String(repeating: "n", count: 24)))
            .setting("payment.transaction_reference", .string(String(repeating: "r", count: 64)))
            .removing("payment.customer_agreement"), issuer: .worldpay)
    }

    @Test func walletTokenShape() throws {
        let token = try JSONParser().parse(Fixtures.walletToken)
        func with(_ edited: JSONValue) -> JSONValue {
            Fixtures.paymentDocument().setting("payment.wallet_token", .string(String(decoding: JSONWriter.encode(edited), as: UTF8.self)))
        }
        try expectFails(with(token.setting("version", .string("EMV_v1"))), issuer: .worldpay, field: "payment.wallet_token.version")
        try expectFails(with(token.removing("data")), issuer: .worldpay, field: "payment.wallet_token.data")
        try expectFails(with(token.setting("signature", .string("not base64!"))), issuer: .worldpay,
                        field: "payment.wallet_token.signature")
        try expectFails(with(token.removing("header")), issuer: .worldpay, field: "payment.wallet_token.header")
        try expectFails(with(token.removing("header.ephemeralPublicKey")), issuer: .worldpay,
                        field: "payment.wallet_token.header.ephemeralPublicKey")
        try expectFails(with(token.removing("header.transactionId")), issuer: .worldpay,
                        field: "payment.wallet_token.header.transactionId")
        let rsa = token.setting("version", .string("RSA_v1")).removing("header.ephemeralPublicKey")
        try expectFails(with(rsa), issuer: .worldpay, field: "payment.wallet_token.header.wrappedKey")
        try expectPasses(with(rsa.setting("header.wrappedKey", .string("d3JhcHBlZA=="))), issuer: .worldpay)
    }

    @Test func paymentActionRules() throws {
        let amount: JSONValue = .object(["currency": .string("GBP"), "value": .integer(100)])
        try expectPasses(Fixtures.paymentActionDocument(action: "cancel"), issuer: .worldpay)
        try expectPasses(Fixtures.paymentActionDocument(action: "partial_settle", amount: amount), issuer: .worldpay)
        try expectFails(Fixtures.paymentActionDocument(action: "partial_settle"), issuer: .worldpay, field: "payment_action.amount")
        try expectFails(Fixtures.paymentActionDocument(action: "settle", amount: amount), issuer: .worldpay,
                        field: "payment_action.amount")
        try expectFails(Fixtures.paymentActionDocument(action: "partial_settle", amount: amount.setting("value", .integer(0))),
                        issuer: .worldpay, field: "payment_action.amount.value")
        try expectFails(Fixtures.paymentActionDocument().setting("payment_action.link", .string("ftp://x/y")), issuer: .worldpay,
                        field: "payment_action.link")
        try expectFails(Fixtures.paymentActionDocument().setting("payment_action.link", .string("https://x/a b")),
                        issuer: .worldpay, field: "payment_action.link")
        try expectFails(Fixtures.paymentActionDocument().setting("payment_action.transaction_reference", .string("")),
                        issuer: .worldpay, field: "payment_action.transaction_reference")
    }
}
