import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

/// Rotating the replay key without an outage: the worker lists two named replay keys
/// (`dlq.replay_keys`), the previous one retiring a little after the test starts.
extension ReliabilityTests {
    /// Must hold: a dead letter sealed with the previous key (as a worker wrote it before the
    /// rotation) is replayed by the tool inside the overlap, its replay signed with the current
    /// key and answered; a replay signed with the previous key is answered inside the overlap;
    /// the worker seals new dead letters with the current key and names it (`dlq.mac_key_id`,
    /// valid per the schema); once the previous key's `not_after` has passed, the tool refuses
    /// its dead letters (no replay produced) and the worker parks a replay signed with it
    /// `unauthenticated`, with no answer and no issuer call.
    @Test("replay key rotation: old dead letters replay until their key retires, new ones are sealed with the current key")
    func replayKeyRotation() async throws {
        let previous = "replay-previous-" + Crypto.hex(Crypto.randomBytes(16))
        let current = "replay-current-" + Crypto.hex(Crypto.randomBytes(16))
        let retiresAt = Timestamps.nowMs() + 20_000
        let rig = try await SigningRig(partitions: 1, name: "reliability-replay-rotation",
                                       environment: ["REPLAY_PREVIOUS": previous, "REPLAY_CURRENT": current]) {
            $0.replaySigningSecret = nil
            $0.replayKeys = [
                RequestSigningKey(id: "r-2026-11", secret: .environment("REPLAY_PREVIOUS"), notAfterMs: retiresAt, keyPath: "dlq.replay_keys[0]"),
                RequestSigningKey(id: "r-2026-12", secret: .environment("REPLAY_CURRENT"), keyPath: "dlq.replay_keys[1]"),
            ]
        }
        defer { rig.stop() }
        let topics = rig.stack.topics
        let keyring = ReplayKeyring(keys: [.init(id: "r-2026-11", secret: Sensitive(previous), notAfterMs: retiresAt),
                                           .init(id: "r-2026-12", secret: Sensitive(current))])
        let now = Timestamps.nowMs()
        // Dead letters as a worker wrote them before the rotation: sealed with the previous key.
        let builder = DeadLetterBuilder(deadLetterTopic: topics.deadLetters, parkedTopic: topics.parked, worker: "w0", group: "g0",
                                        seal: DeadLetterSeal(key: Sensitive(previous), keyID: "r-2026-11"))
        func deadLetter(_ request: GeneratedRequest, offset: Int64) -> DeadLetterEntry {
            let verdict = DeadLetterReplayPolicy.verdict(code: .publishFailed, summary: DeadLetterSummary(value: request.value, recordTimestampMs: now),
                                                         issuerMayHaveBeenCalled: false, nowMs: now)
            let letter = builder.letter(key: request.key, value: request.value, headers: [],
                                        source: .init(partition: TopicPartition(topic: topics.requests, partition: 0), offset: offset, timestampMs: now),
                                        code: .publishFailed, reason: "the result could not be published", attempts: 1, firstFailedAtMs: now,
                                        nowMs: now, replayOf: nil, replay: verdict, parkedReason: "")
            return DeadLetterEntry(message: KafkaMessage(topic: topics.deadLetters, partition: 0, offset: offset, key: request.key,
                                                         value: request.value, headers: letter.message.headers, timestampMs: now))
        }
        let requests = try (0..<5).map { index in
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_replay_rot_\(index)",
                                      requestID: rig.factory.requestID("replay-rot"))
        }
        let replayer = DeadLetterReplayer(properties: rig.stack.producerProperties, auditTopic: topics.audit, operatorName: "alice",
                                          replayKeys: keyring, targetTopics: [topics.requests, topics.reconcile])
        func replaySignedDirectly(_ request: GeneratedRequest, offset: Int64, secret: String, keyID: String) async throws {
            let replayed = KafkaOutgoingMessage(topic: topics.requests, key: request.key, value: request.value,
                                                headers: [KafkaHeader(key: DeadLetterHeader.replayOf, string: "\(topics.deadLetters):0:\(offset)"),
                                                          KafkaHeader(key: DeadLetterHeader.replayOperator, string: "bob")])
            _ = try await rig.producer.send(RequestSigner(secret: Sensitive(secret), keyID: keyID).signed(replayed, partitionCount: 1,
                                                                                                           nowMs: Timestamps.nowMs()))
        }

        // Inside the overlap: the tool replays a dead letter sealed with the previous key (signing
        // the replay with the current key), and a replay signed with the previous key is answered.
        #expect(try replayer.replay([deadLetter(requests[0], offset: 20)], to: nil, ratePerSecond: nil, dryRun: false,
                                    nowMs: { Timestamps.nowMs() }) == [.replayed(topic: topics.requests, dryRun: false)])
        try await replaySignedDirectly(requests[1], offset: 21, secret: previous, keyID: "r-2026-11")
        // The worker seals a dead letter of its own (an unsigned request of the signed program) with the current key.
        let unsigned = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_replay_rot_unsigned",
                                                 requestID: rig.factory.requestID("replay-rot"))
        try rig.send(unsigned, headers: [])
        #expect(rig.collector.wait(timeoutMs: 60_000) { snapshot in
            [requests[0], requests[1]].allSatisfy { snapshot.final($0.requestID) != nil }
                && !rig.unauthenticatedDeadLetters(unsigned.requestID, in: snapshot).isEmpty
        })
        let sealed = try #require(rig.unauthenticatedDeadLetters(unsigned.requestID, in: rig.collector.snapshot).first)
        #expect(sealed.headers.filter { $0.key == DeadLetterHeader.macKeyID }.map(\.stringValue) == ["r-2026-12"])
        #expect((try? keyring.verify(sealed, nowMs: Timestamps.nowMs()).get()) != nil, "the worker's dead letter does not verify under its key")
        #expect((try? DeadLetterSeal(key: Sensitive(previous), keyID: "r-2026-12").verify(sealed).get()) == nil,
                "the worker's dead letter verifies under the previous key")
        var members: [String: JSONValue] = [:]
        for header in sealed.headers { members[header.key] = header.value.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null }
        let verdict = try #require(try SchemaChecker.validate([.init(id: "sealed", schema: "dead-letter-headers.schema.json",
                                                                     bytes: JSONWriter.encode(.object(members)))])["sealed"])
        #expect(verdict.isValid && verdict.undeclared.isEmpty, "\(verdict.errors) \(verdict.undeclared)")

        // After the previous key's not_after: its dead letters are refused by the tool, its replays by the worker.
        try await Task.sleep(for: .milliseconds(max(0, retiresAt - Timestamps.nowMs() + 500)))
        let late = try replayer.replay([deadLetter(requests[2], offset: 22)], to: nil, ratePerSecond: nil, dryRun: false,
                                       nowMs: { Timestamps.nowMs() })
        guard case .refused(let reason)? = late.first, late.count == 1 else {
            Issue.record("a dead letter sealed with a retired key was replayed: \(late)")
            return
        }
        #expect(reason.contains("'r-2026-11', retired at"), "\(reason)")
        try await replaySignedDirectly(requests[3], offset: 23, secret: previous, keyID: "r-2026-11")
        // A dead letter sealed with the current key still replays.
        let currentBuilder = DeadLetterBuilder(deadLetterTopic: topics.deadLetters, parkedTopic: topics.parked, worker: "w0", group: "g0",
                                               seal: keyring.seal(nowMs: Timestamps.nowMs()))
        let fresh = currentBuilder.letter(key: requests[4].key, value: requests[4].value, headers: [],
                                          source: .init(partition: TopicPartition(topic: topics.requests, partition: 0), offset: 24, timestampMs: now),
                                          code: .publishFailed, reason: "the result could not be published", attempts: 1, firstFailedAtMs: now,
                                          nowMs: now, replayOf: nil,
                                          replay: DeadLetterReplayPolicy.verdict(code: .publishFailed,
                                                                                 summary: DeadLetterSummary(value: requests[4].value, recordTimestampMs: now),
                                                                                 issuerMayHaveBeenCalled: false, nowMs: now),
                                          parkedReason: "")
        let freshEntry = DeadLetterEntry(message: KafkaMessage(topic: topics.deadLetters, partition: 0, offset: 24, key: requests[4].key,
                                                               value: requests[4].value, headers: fresh.message.headers, timestampMs: now))
        #expect(try replayer.replay([freshEntry], to: nil, ratePerSecond: nil, dryRun: false, nowMs: { Timestamps.nowMs() })
                    == [.replayed(topic: topics.requests, dryRun: false)])

        let done = rig.collector.wait(timeoutMs: 60_000) { snapshot in
            snapshot.final(requests[4].requestID) != nil
                && snapshot.deadLetters.contains { $0.topic == topics.parked && $0.summary.requestID == requests[3].requestID }
        }
        #expect(done)
        let snapshot = rig.collector.snapshot
        for request in [requests[0], requests[1], requests[4]] {
            #expect(snapshot.final(request.requestID)?.status == .provisioned, "\(request.requestID)")
        }
        #expect(snapshot.audit.contains { $0.requestID == requests[0].requestID && $0.stage == .received && $0.operator == "alice" })
        #expect(snapshot.audit.contains { $0.requestID == requests[1].requestID && $0.stage == .received && $0.operator == "bob" })
        for request in [requests[2], requests[3]] {
            #expect(snapshot.results[request.requestID] == nil, "\(request.requestID) was answered after its replay key retired")
            #expect(!rig.stack.simulator.calls.contains { $0.cardID == JSONValue.parsed(request.value)["card"]?["id"]?.stringValue })
        }
        let parked = snapshot.deadLetters.filter { $0.topic == topics.parked && $0.summary.requestID == requests[3].requestID }
        #expect(parked.map { $0.provenance?.code } == [.unauthenticated])
        #expect(parked.first?.provenance?.reason.contains("retired at") == true, "\(parked.first?.provenance?.reason ?? "-")")
    }
}
