@testable import Console
import Contract
import Harness
import Kafka
import Observability
import Pipeline
import Testing
import TestSupport

/// Rotating the audit pseudonym key (`audit.pseudonym_keys`) with the worker restarted between
/// three configurations: `[p1]`, then `[p1, p2]` (the overlap), then `[p2]`.
@Suite("Audit pseudonym key rotation: pseudonyms name their key, and a card's trace joins across the rotation", .serialized,
       .timeLimit(.minutes(5)))
struct PseudonymRotationTests {
    /// A card's pseudonym as CONTRACT section 5 defines it, computed here without `Pseudonymizer`:
    /// `<id>:` and the first 16 bytes of HMAC-SHA256(key, "provisioner/card_ref/v1" 0x00 card id) in hex.
    static func cardRef(_ card: String, key: String, id: String) -> String {
        let mac = Crypto.hmacSHA256(key: Array(key.utf8), data: Array("provisioner/card_ref/v1".utf8) + [0] + Array(card.utf8))
        return id + ":" + Crypto.hex(Array(mac.prefix(16)))
    }

    /// Must hold: each phase's audit events carry the card's pseudonym under its current key,
    /// prefixed with the key id; events of the overlap also carry it under the previous key
    /// (`card_ref_previous`), and validate against the schema; the console's card trace
    /// (`RequestTracer.requestIDs(cardRef:)`) finds all three requests from the pseudonym under
    /// either key, and another card's request under neither.
    @Test("each phase's card_ref names its key; the overlap carries both; the trace by either pseudonym finds every request")
    func traceJoinsAcrossRotation() async throws {
        let stack = try EmbeddedStack(brokers: 1, partitions: 1)
        defer { stack.stop() }
        let p1 = "pseudonym-one-" + Crypto.hex(Crypto.randomBytes(16))
        let p2 = "pseudonym-two-" + Crypto.hex(Crypto.randomBytes(16))
        let environment = ["ROTATION_P1": p1, "ROTATION_P2": p2]
        let group = UniqueName.make("pseudonym-rotation")
        let key1 = RequestSigningKey(id: "p1", secret: .environment("ROTATION_P1"), notAfterMs: Timestamps.nowMs() + 3_600_000,
                                     keyPath: "audit.pseudonym_keys[0]")
        let key2 = RequestSigningKey(id: "p2", secret: .environment("ROTATION_P2"), keyPath: "audit.pseudonym_keys[1]")
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: 1)
        defer { collector.stop() }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 1)
        let card = "pm_rotating_" + Crypto.hex(Crypto.randomBytes(6))
        let other = "pm_other_" + Crypto.hex(Crypto.randomBytes(6))
        var ids: [String] = []
        var otherID = ""
        for (phase, keys) in [[key1], [key1, key2], [key2]].enumerated() {
            let configuration = try stack.configuration(groupID: group, workerID: "rotation-w\(phase)") {
                $0.pseudonymKey = nil
                $0.pseudonymKeys = keys
            }
            let worker = try stack.startWorker(configuration, extraEnvironment: environment, logger: Logger(label: "worker", minimumLevel: .warning))
            try #require(stack.waitForGroup())
            var sent = [try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card, requestID: factory.requestID("rot\(phase)"))]
            if phase == 0 {
                sent.append(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: other, requestID: factory.requestID("other")))
                otherID = sent[1].requestID
            }
            for request in sent { _ = try await producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: request.key, value: request.value)) }
            try #require(collector.wait(timeoutMs: 60_000) { snapshot in sent.allSatisfy { snapshot.final($0.requestID) != nil } })
            ids.append(sent[0].requestID)
            stack.stopWorker(worker)
        }

        let under1 = Self.cardRef(card, key: p1, id: "p1")
        let under2 = Self.cardRef(card, key: p2, id: "p2")
        let audit = collector.snapshot.audit
        let expected: [(current: String, previous: String?)] = [(under1, nil), (under2, under1), (under2, nil)]
        for (phase, id) in ids.enumerated() {
            let refs = audit.filter { $0.requestID == id }.compactMap(\.cardRef)
            #expect(!refs.isEmpty, "phase \(phase): no audit event carries card_ref")
            #expect(refs.allSatisfy { $0.text == expected[phase].current && $0.previous == expected[phase].previous },
                    "phase \(phase): \(refs.map { "\($0.text) / \($0.previous ?? "-")" })")
        }
        // The overlap's events as written validate against the schema (card_ref_previous declared).
        let raw = try await KafkaTestReader(bootstrapServers: stack.bootstrapServers).readExisting(topic: stack.topics.audit)
        let overlap = raw.filter { String(decoding: $0.value, as: UTF8.self).contains(ids[1]) }
        try #require(!overlap.isEmpty)
        let verdicts = try SchemaChecker.validate(overlap.enumerated().map { .init(id: "audit \($0.offset)", schema: "audit-event.schema.json", bytes: $0.element.value) })
        for (id, verdict) in verdicts {
            #expect(verdict.isValid && verdict.undeclared.isEmpty, "\(id): \(verdict.errors) \(verdict.undeclared)")
        }
        #expect(overlap.contains { String(decoding: $0.value, as: UTF8.self).contains("\"card_ref_previous\":\"\(under1)\"") })

        let tracer = RequestTracer(reader: TopicReader(properties: stack.consumerProperties, perPartitionLimit: 10_000), topics: stack.topics)
        #expect(try tracer.requestIDs(cardRef: under1) == ids)
        #expect(try tracer.requestIDs(cardRef: under2) == ids)
        #expect(try tracer.requestIDs(cardRef: Self.cardRef(other, key: p1, id: "p1")) == [otherID])
    }
}
