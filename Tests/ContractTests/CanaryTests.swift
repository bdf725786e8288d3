import Contract
import TestSupport
import Testing

/// Secret fields carry unique markers; they go through every path the worker has (decode,
/// validate, rejection, results, audit, error messages, printing and dumping). No marker may show
/// up anywhere but inside the JWE, which must carry the payload markers.
@Suite("Canary: secrets never leak", .timeLimit(.minutes(5)))
struct CanaryTests {
    static let markers = (
        card: "pmCANARYcard01", user: "CANARYuser02", wallet: "CANARYwallet03", device: "CANARYdevice04",
        session: "CANARYsession05", nonce: Crypto.base64Encode(Array("CANARYnonce06".utf8)),
        signature: Crypto.base64Encode(Array("CANARYsignature07".utf8)), tokenData: Crypto.base64Encode(Array("CANARYtoken08".utf8)),
        link: "https://pay.example/CANARYlink09", activation: Crypto.base64Encode(Array("CANARYactivation10".utf8)),
        opc: "CANARYopc11"
    )

    static var secretMarkers: [String] {
        let certificate = Fixtures.base64("leaf.der")
        let middle = certificate.index(certificate.startIndex, offsetBy: 200)
        return [markers.card, markers.user, markers.wallet, markers.device, markers.session, markers.nonce, markers.signature,
                markers.tokenData, "CANARYtoken08", markers.link, markers.activation, markers.opc,
                String(certificate[middle..<certificate.index(middle, offsetBy: 40)])]
    }

    static func documents() -> [JSONValue] {
        let apple = Fixtures.appleDocument()
            .setting("card.id", .string(markers.card)).setting("card.user_id", .string(markers.user))
            .setting("apple.nonce", .string(markers.nonce)).setting("apple.nonce_signature", .string(markers.signature))
        let google = Fixtures.googleDocument()
            .setting("card.id", .string(markers.card)).setting("card.user_id", .string(markers.user))
            .setting("google.wallet_id", .string(markers.wallet)).setting("google.device_id", .string(markers.device))
            .setting("google.server_session_id", .string(markers.session))
        let token = try? JSONParser().parse(Fixtures.walletToken).setting("data", .string(markers.tokenData))
        let tokenText = String(decoding: JSONWriter.encode(token ?? .null), as: UTF8.self)
        let payment = Fixtures.paymentDocument().setting("card.id", .string(markers.card))
            .setting("payment.wallet_token", .string(tokenText))
        let action = Fixtures.paymentActionDocument().setting("card.id", .string(markers.card))
            .setting("payment_action.link", .string(markers.link))
        var documents = [apple, google, payment, action]
        // Broken variants: rejections at decode and at validation, with the secrets still inside.
        documents.append(apple.setting("card.last4", .string("x")))
        documents.append(apple.setting("apple.certificates", .array([.string(markers.nonce), .string(markers.signature)])))
        documents.append(apple.setting("apple.nonce", .string(markers.card)))
        documents.append(apple.removing("reply"))
        documents.append(google.setting("google.wallet_id", .string(markers.wallet + String(repeating: "x", count: 40))))
        documents.append(google.setting("google.device_id", .integer(7)))
        documents.append(google.removing("google.server_session_id").setting("google.wallet_id", .string(" ")))
        documents.append(payment.setting("payment.wallet_token", .string(markers.tokenData)))
        documents.append(payment.setting("payment.amount.value", .integer(0)))
        documents.append(action.setting("payment_action.link", .string(markers.link + " x")))
        documents.append(apple.setting("version", .integer(9)))
        documents.append(apple.removing("request_id"))
        return documents
    }

    @Test func noMarkerLeaksOutsideTheJWE() throws {
        var outputs: [String] = []
        func collect(_ value: Any) {
            outputs.append(String(describing: value))
            outputs.append(String(reflecting: value))
            var dumped = ""
            dump(value, to: &dumped)
            outputs.append(dumped)
        }
        let validator = RequestValidator()
        let nonces = NonceGuard()
        let pseudonymizer = Pseudonymizer(key: Array("canary-key".utf8))
        let replyKey = try #require(Fixtures.replyKey)
        var jwes: [String] = []
        var decodedCount = 0, rejectedCount = 0, deadLetterCount = 0

        for (index, document) in Self.documents().enumerated() {
            let bytes = JSONWriter.encode(document)
            let decoding = RequestDecoder.decode(bytes)
            collect(decoding)
            let timing = ResultTiming(receivedAtMs: 1_795_946_400_000)
            switch decoding {
            case .deadLetter(let cause):
                deadLetterCount += 1
                outputs.append(cause.message)
                outputs.append(String(decoding: AuditEvent(requestID: nil, stage: .deadLettered, atMs: 0, reason: AuditReason(cause)).encodedJSON(), as: UTF8.self))
            case .rejected(let rejection):
                rejectedCount += 1
                outputs.append(rejection.message)
                outputs.append(String(decoding: ProvisioningResult(rejection: rejection, timing: timing).encodedJSON(), as: UTF8.self))
                outputs.append(String(decoding: AuditEvent(requestID: rejection.requestID, stage: .rejected, atMs: 0,
                                                           program: rejection.program, code: rejection.code,
                                                           reason: AuditReason(rejection)).encodedJSON(), as: UTF8.self))
            case .decoded(let request):
                decodedCount += 1
                collect(request)
                for issuer in IssuerKind.allCases {
                    let failure = validator.validate(request, issuer: issuer, nonceGuard: nonces, nowMs: Int64(index))
                    collect(failure as Any)
                    let event = AuditEvent(requestID: request.requestID, stage: failure == nil ? .issuerCallStarted : .rejected,
                                           atMs: 0, program: request.program, issuer: issuer, wallet: request.wallet,
                                           code: failure?.code, cardRef: pseudonymizer.cardRef(request.card.id),
                                           deviceRef: pseudonymizer.deviceRef(for: request), last4: request.card.last4,
                                           reason: failure.map(AuditReason.init))
                    outputs.append(String(decoding: event.encodedJSON(), as: UTF8.self))
                    collect(event)
                    if let failure {
                        outputs.append(failure.message)
                        outputs.append(String(decoding: ProvisioningResult(request: request, issuer: issuer, failure: failure,
                                                                           timing: timing).encodedJSON(), as: UTF8.self))
                        continue
                    }
                    let payload: ProvisioningPayload = request.wallet == .applePay
                        ? .apple(activationData: Sensitive(Self.markers.activation), encryptedPassData: Sensitive("Yg=="),
                                 ephemeralPublicKey: Sensitive("Yw=="))
                        : .googleWallet(opaquePaymentCard: Sensitive(Self.markers.opc), googleProvisioningPayload: Sensitive(Self.markers.opc))
                    collect(payload)
                    let answer = request.kind == .provision ? payload.answer(for: request, issuer: issuer)
                        : .issuerError(httpStatus: 400, issuerCode: "bad", message: Sensitive(Self.markers.card))
                    collect(answer)
                    let outcome = OutcomeTable.outcome(for: answer, issuer: issuer, wallet: request.wallet, kind: request.kind)
                    collect(outcome)
                    var jwe: String?
                    if request.kind == .provision, let reply = request.reply {
                        jwe = try JWE.encrypt(payload.plaintextJSON(), to: try reply.recipient())
                        jwes.append(try #require(jwe))
                    }
                    let result = ProvisioningResult(request: request, issuer: issuer, outcome: outcome, payload: jwe, timing: timing)
                    var resultText = String(decoding: result.encodedJSON(), as: UTF8.self)
                    if let jwe { resultText = resultText.replacingOccurrences(of: jwe, with: "<jwe>") }
                    outputs.append(resultText)
                    outputs.append(String(decoding: AuditEvent(requestID: request.requestID, stage: .issuerResponded, atMs: 0,
                                                               reason: AuditReason(outcome)).encodedJSON(), as: UTF8.self))
                }
            }
        }
        #expect(decodedCount >= 10)
        #expect(rejectedCount >= 2)
        #expect(deadLetterCount == 2)
        #expect(!jwes.isEmpty)
        collect(Sensitive(Self.markers.card))
        collect(CardReference(id: Sensitive(Self.markers.card)))
        collect(PaymentLinks(settle: Sensitive(Self.markers.link)))

        let everything = outputs.joined(separator: "\n")
        #expect(everything.contains("<redacted>"))
        for marker in Self.secretMarkers {
            #expect(!everything.contains(marker), "marker \(marker) leaked")
        }
        // Inside the JWE, and only there, the payload markers are present.
        for jwe in jwes {
            for marker in Self.secretMarkers { #expect(!jwe.contains(marker)) }
            let plaintext = String(decoding: try JWE.decrypt(jwe, with: replyKey), as: UTF8.self)
            #expect(plaintext.contains(Self.markers.activation) || plaintext.contains(Self.markers.opc))
        }
    }
}
