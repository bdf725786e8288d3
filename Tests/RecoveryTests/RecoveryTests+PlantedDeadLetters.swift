import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

extension RecoveryTests {
    // MARK: - Whoever can write the dead-letter topic cannot get a replay

    /// Dead letters as someone with write access to the dead-letter topic would plant them, and
    /// one as a worker writes it: `dlq replay` (the built binary, with the replay key) replays only
    /// the worker's, and only to the request or reconcile topic.
    @Test("dlq replay refuses planted dead letters (no dlq.mac, a MAC under another key, an altered verdict, the audit topic as target) and still replays a worker's")
    func plantedDeadLettersAreNotReplayed() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration(workerID: "worker-dlq-mac"))
        let topics = rig.topics
        let now = Timestamps.nowMs()
        func request() throws -> GeneratedRequest {
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card(), requestID: rig.factory.requestID("planted"))
        }
        // Plausible provenance: what a worker writes for a publish_failed Google Pay request (replayable).
        func provenance(topic: String, offset: Int64) -> DeadLetterProvenance {
            DeadLetterProvenance(
                originalTopic: topic, originalPartition: 0, originalOffset: offset, originalTimestampMs: now, code: .publishFailed,
                reason: "the result could not be published", attempts: 1, firstFailedAtMs: now, failedAtMs: now, worker: "worker-dlq-mac",
                group: rig.group, isReplayable: true,
                replayableReason: "the issuer was not called (or the wallet allows a retry): replay once the fault is fixed")
        }
        let builder = DeadLetterBuilder(deadLetterTopic: topics.deadLetters, parkedTopic: topics.parked, worker: "worker-dlq-mac",
                                        group: rig.group, seal: DeadLetterSeal(key: Sensitive(rig.replayKey)))
        func builtLetter(_ request: GeneratedRequest, from topic: String, offset: Int64, code: DeadLetterCode) -> KafkaOutgoingMessage {
            let verdict = DeadLetterReplayPolicy.verdict(code: code, summary: DeadLetterSummary(value: request.value, recordTimestampMs: now),
                                                         issuerMayHaveBeenCalled: false, nowMs: now)
            return builder.letter(key: request.key, value: request.value, headers: [],
                                  source: .init(partition: TopicPartition(topic: topic, partition: 0), offset: offset, timestampMs: now),
                                  code: code, reason: "the result could not be published", attempts: 1, firstFailedAtMs: now, nowMs: now,
                                  replayOf: nil, replay: verdict, parkedReason: "").message
        }

        // 1. The full plausible header set, no dlq.mac.
        let unsealed = try request()
        try await rig.send(unsealed.value, key: unsealed.key, headers: provenance(topic: topics.requests, offset: 7).headers, topic: topics.deadLetters)
        // 2. A well-formed dlq.mac under a key that is not the replay key.
        let otherKey = try request()
        let otherProvenance = provenance(topic: topics.requests, offset: 8)
        let otherSeal = DeadLetterSeal(key: Sensitive("not-the-replay-key-" + Crypto.hex(Crypto.randomBytes(8))))
        try await rig.send(otherKey.value, key: otherKey.key,
                           headers: otherProvenance.headers + otherSeal.headers(key: otherKey.key, value: otherKey.value, headers: [],
                                                                                 provenance: otherProvenance),
                           topic: topics.deadLetters)
        // 3. A worker's dead letter that was not replayable (unauthenticated), its verdict flipped.
        let flipped = try request()
        var flippedLetter = builtLetter(flipped, from: topics.requests, offset: 9, code: .unauthenticated)
        #expect(flippedLetter.headers.last { $0.key == DeadLetterHeader.replayable }?.stringValue == "false")
        flippedLetter.headers.append(KafkaHeader(key: DeadLetterHeader.replayable, string: "true"))
        _ = try await rig.producer.send(flippedLetter)
        // 4. A forged record naming the audit topic, no dlq.mac.
        let forgedAudit = try request()
        try await rig.send(forgedAudit.value, key: forgedAudit.key, headers: provenance(topic: topics.audit, offset: 10).headers,
                           topic: topics.deadLetters)
        // 5. A dead letter sealed under the replay key whose original topic is the audit topic.
        let sealedAudit = try request()
        _ = try await rig.producer.send(builtLetter(sealedAudit, from: topics.audit, offset: 11, code: .publishFailed))
        // 6. A dead letter as the worker writes it: replayable.
        let genuine = try request()
        _ = try await rig.producer.send(builtLetter(genuine, from: topics.requests, offset: 12, code: .publishFailed))
        let plantedIDs = [unsealed, otherKey, flipped, forgedAudit, sealedAudit].map(\.requestID)

        let tool = rig.operatorTool
        // --to is held to the same rule.
        let toAudit = try await tool.dlq(["replay", "--to", topics.audit, "--operator", "ops.eve"])
        #expect(toAudit.status != 0, "\(toAudit)")
        #expect(toAudit.everything.contains("--to must be the request topic"), "\(toAudit)")
        // Without the replay key nothing is replayed (it cannot check dlq.mac).
        let keyless = try await OperatorTool(bootstrap: rig.bootstrap).dlq(["replay", "--dry-run", "--request-id", genuine.requestID])
        #expect(keyless.status != 0, "\(keyless)")
        #expect(keyless.output.contains("this tool has no replay key"), "\(keyless)")

        let requestsBefore = try rig.endOffsets(topics.requests).values.reduce(0, +)
        let auditBefore = try rig.endOffsets(topics.audit).values.reduce(0, +)
        let run = try await tool.dlq(["replay", "--json", "--operator", "ops.eve"])
        #expect(run.status == 1, "some entries were refused: \(run)")
        let outcomes = try DLQListing.entries(json: run.standardOutput)
        func outcome(_ request: GeneratedRequest) -> (result: String, detail: String)? {
            outcomes.first { $0["request_id"]?.stringValue == request.requestID }
                .map { ($0["result"]?.stringValue ?? "", $0["detail"]?.stringValue ?? "") }
        }
        for (request, reason) in [(unsealed, "no dlq.mac"), (otherKey, "dlq.mac does not verify"), (flipped, "dlq.mac does not verify"),
                                  (forgedAudit, "no dlq.mac"), (sealedAudit, "replays go only to the request or reconcile topic")] {
            let seen = outcome(request)
            #expect(seen?.result == "refused", "\(request.requestID): \(String(describing: seen))")
            #expect(seen?.detail.contains(reason) == true, "\(request.requestID): expected '\(reason)', got \(String(describing: seen))")
        }
        #expect(outcome(genuine)?.result == "replayed", "\(run)")

        // The worker answers the genuine replay; nothing else reached the requests or audit topic.
        let snapshot = try await rig.wait(for: "the answer to the replay of \(genuine.requestID)") {
            $0.final(genuine.requestID) != nil && $0.stages(genuine.requestID).contains(.replayed)
        }
        #expect(snapshot.final(genuine.requestID)?.status == .provisioned)
        #expect(try rig.endOffsets(topics.requests).values.reduce(0, +) == requestsBefore + 1, "only the genuine replay was produced")
        let replays = try await KafkaTestReader(bootstrapServers: rig.bootstrap).readExisting(topic: topics.requests)
            .filter { $0.header(DeadLetterHeader.replayOf) != nil }
        #expect(replays.map(\.value) == [genuine.value])
        let audit = try await KafkaTestReader(bootstrapServers: rig.bootstrap).readExisting(topic: topics.audit)
        let plantedValues = [unsealed, otherKey, flipped, forgedAudit, sealedAudit].map(\.value)
        #expect(!audit.contains { plantedValues.contains($0.value) }, "a planted request was produced to the audit topic")
        #expect(try rig.endOffsets(topics.audit).values.reduce(0, +) > auditBefore, "the genuine replay was audited")
        for id in plantedIDs {
            #expect(snapshot.results[id] == nil, "\(id) was answered")
            #expect(!snapshot.audit.contains { $0.requestID == id && $0.stage == .replayed }, "\(id) was audited as replayed")
        }
        let plantedCards = Set([unsealed, otherKey, flipped, forgedAudit, sealedAudit].compactMap { $0.key.map { String(decoding: $0, as: UTF8.self) } })
        #expect(!rig.stack.simulator.calls.contains { plantedCards.contains($0.cardID) }, "the issuer was called for a planted request")
    }
}
