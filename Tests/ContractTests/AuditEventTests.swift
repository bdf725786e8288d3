import Contract
import TestSupport
import Testing

@Suite("Audit events and pseudonyms", .timeLimit(.minutes(5)))
struct AuditEventTests {
    let pseudonymizer = Pseudonymizer(key: Array("audit-key-for-tests-0123456789".utf8))

    @Test func encodesExactlyTheContractFields() throws {
        let eventID = try #require(AuditEventID(hex: "00112233445566778899aabbccddeeff"))
        let event = AuditEvent(
            eventID: eventID, requestID: "req-1", stage: .issuerResponded, atMs: 1_795_946_400_000, program: "demo-dcs",
            issuer: .dcs, wallet: .googleWallet, status: .rejected, code: .cardNotFound, httpStatus: 200, latencyMs: 37,
            attempt: 1, partition: 3, offset: 42, worker: "worker-1", cardRef: pseudonymizer.cardRef(Sensitive("card-1")),
            deviceRef: pseudonymizer.deviceRef(Sensitive("device-1")), last4: CardLast4("4242"), operator: nil,
            reason: AuditReason(.cardNotFound))
        let object = try #require(try JSONParser().parse(event.encodedJSON()).objectValue)
        #expect(Set(object.keys) == ["event_id", "request_id", "stage", "at", "program", "issuer", "wallet", "status", "code",
                                     "http_status", "latency_ms", "attempt", "partition", "offset", "worker", "card_ref",
                                     "device_ref", "last4", "operator", "reason"])
        #expect(object["stage"]?.stringValue == "issuer_responded")
        #expect(object["at"]?.stringValue == "2026-11-29T10:00:00.000Z")
        #expect(object["operator"]?.isNull == true)
        #expect(try AuditEvent.decode(event.encodedJSON()) == event)
    }

    @Test func identifiersOutsideTheSafeAlphabetAreReplaced() {
        let event = AuditEvent(requestID: "req 1", stage: .replayed, atMs: 0, program: #"{"json":1}"#, worker: "w-1",
                               operator: "alice@example.com")
        #expect(event.requestID == AuditEvent.invalidIdentifier)
        #expect(event.program == AuditEvent.invalidIdentifier)
        #expect(event.worker == "w-1")
        #expect(event.operator == "alice@example.com")
        let certificate = Fixtures.base64("leaf.der")
        #expect(AuditEvent.safeIdentifier(certificate) == AuditEvent.invalidIdentifier)
        #expect(AuditEvent.safeIdentifier("3vT9Kw==") == AuditEvent.invalidIdentifier)
    }

    @Test func reasonsComeFromSafeParts() throws {
        #expect(AuditReason("publish retried").text == "publish retried")
        #expect((AuditReason(.rateLimited) + AuditReason(TransportFailure.notSent)).text == "rate_limited; not_sent")
        let rejection = try #require(Fixtures.rejection(Fixtures.appleDocument().setting("card.id", .integer(3))))
        #expect(AuditReason(rejection).text.hasPrefix("invalid_request: card.id"))
        let cause = try #require(Fixtures.deadLetter(Array("{".utf8)))
        #expect(AuditReason(cause).text.hasPrefix("not_json"))
    }

    @Test func decodeChecksTypedFields() {
        let good = #"{"event_id":"00112233445566778899aabbccddeeff","request_id":"r","stage":"received","at":"2026-11-29T10:00:00Z"}"#
        #expect(throws: Never.self) { try AuditEvent.decode(Array(good.utf8)) }
        for bad in [good.replacingOccurrences(of: "received", with: "lunch"),
                    good.replacingOccurrences(of: #""stage""#, with: #""stage2""#),
                    good.replacingOccurrences(of: "00112233", with: "zz112233"),
                    good.replacingOccurrences(of: #""r""#, with: #""r","card_ref":"pm_7Hq2""#),
                    good.replacingOccurrences(of: #""r""#, with: #""r","last4":"12345""#)] {
            #expect(throws: ContractDecodingError.self) { try AuditEvent.decode(Array(bad.utf8)) }
        }
    }

    @Test func pseudonymsAreKeyedDeterministicAndDomainSeparated() throws {
        let card = pseudonymizer.cardRef(Sensitive("pm_7Hq2"))
        #expect(card == pseudonymizer.cardRef(Sensitive("pm_7Hq2")))
        #expect(card.hex.count == 32)
        #expect(Pseudonym(hex: card.hex) == card)
        #expect(card != pseudonymizer.deviceRef(Sensitive("pm_7Hq2")))
        #expect(card != Pseudonymizer(key: Array("another key".utf8)).cardRef(Sensitive("pm_7Hq2")))
        #expect(card != pseudonymizer.cardRef(Sensitive("pm_7Hq3")))
        #expect(!card.hex.contains("7Hq2"))
        // HMAC-SHA256(key, "provisioner/card_ref/v1" || 0x00 || id), first 16 bytes.
        let expected = Crypto.hex(Array(Crypto.hmacSHA256(key: Array("audit-key-for-tests-0123456789".utf8),
                                                          data: Array("provisioner/card_ref/v1".utf8) + [0] + Array("pm_7Hq2".utf8)).prefix(16)))
        #expect(card.hex == expected)
        #expect("\(pseudonymizer)" == "<redacted>")

        let apple = try #require(Fixtures.decoded(Fixtures.appleDocument()))
        let google = try #require(Fixtures.decoded(Fixtures.googleDocument()))
        #expect(pseudonymizer.deviceRef(for: apple) != nil)
        #expect(pseudonymizer.deviceRef(for: google) == pseudonymizer.deviceRef(Sensitive("9b1c7e04f2a8")))
        #expect(pseudonymizer.deviceRef(for: try #require(Fixtures.decoded(Fixtures.paymentDocument()))) == nil)
    }

    @Test func randomEventIDsAreWellFormed() {
        let a = AuditEventID.random(), b = AuditEventID.random()
        #expect(a != b)
        #expect(AuditEventID(hex: a.hex) == a)
        #expect(AuditEventID(hex: "ABCDEF") == nil)
    }
}
