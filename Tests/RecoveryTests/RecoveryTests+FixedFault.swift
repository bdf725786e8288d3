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
    // MARK: - 6b. A fault an operator can fix, then a replay that succeeds

    @Test("publish_failed: a worker with a misconfigured results topic dead-letters the request; after a restart with the right config, dlq replay answers it")
    func publishFailedReplaysAfterTheFix() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let topics = rig.topics
        let tool = rig.operatorTool
        // The typo names a topic this worker may not write to (the cluster refuses it, as a
        // broker's ACLs would); every publish of a result fails.
        let typo = "provisioning.resluts"
        rig.stack.cluster.setTopicError(typo, error: .topicAuthorizationFailed)
        let misconfigured = try rig.configuration(workerID: "worker-typo") { configuration in
            configuration.topics.results = typo
            configuration.kafkaProducer["message.timeout.ms"] = "1500"
            configuration.kafkaProducer["log_level"] = "3"  // librdkafka's warning per refused metadata refresh is noise here
            configuration.publishAttempts = 2
        }
        let broken = try rig.startWorker(misconfigured)

        // Legacy Google Pay: a replay is allowed even though the issuer was called.
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card())
        let id = request.requestID
        try await rig.send(request)
        var snapshot = try await rig.wait(for: "the publish_failed dead letter of \(id)") {
            !$0.deadLetters(id, topic: topics.deadLetters).isEmpty && $0.stages(id).contains(.deadLettered)
        }
        let entries = snapshot.deadLetters(id, topic: topics.deadLetters)
        try #require(entries.count == 1)
        let entry = entries[0]
        let provenance = try #require(entry.provenance)
        #expect(provenance.code == .publishFailed)
        #expect(provenance.isReplayable, "\(provenance.replayableReason)")
        #expect(provenance.originalTopic == topics.requests)
        #expect(provenance.worker == "worker-typo")
        #expect(entry.value == request.value)
        #expect(snapshot.all(id).isEmpty, "no result reached the real results topic")
        #expect(Self.calls(rig, handshake: request.handshake) == 1)

        // The operator fixes the configuration and restarts the worker.
        await rig.stopWorker(broken)
        try rig.startWorker(try rig.configuration(workerID: "worker-fixed"))

        let replay = try await tool.dlq(["replay", "--code", "publish_failed", "--program", "demo-imprint", "--wallet", "google_pay",
                                         "--operator", "ops.carol"])
        #expect(replay.status == 0, "\(replay)")
        #expect(replay.output.contains("1 of 1 replayed"), "\(replay)")
        snapshot = try await rig.wait(for: "the answer to the replay of \(id)") {
            $0.final(id) != nil && $0.stages(id).contains(.resultPublished) && $0.stages(id).contains(.replayed)
        }
        let answers = try #require(snapshot.results[id])
        try #require(answers.count == 1)
        let answer = answers[0]
        // The first call was applied at the issuer and its final decided (only the publish
        // failed): the replay publishes that decision as decided, without calling again.
        #expect(answer.result.status == .provisioned, "\(answer.result.status): \(answer.result.message)")
        #expect(answer.result.isFinal)
        #expect(answer.headers.last { $0.key == DeadLetterHeader.replayOf }?.text == entry.identifier,
                "x-replay-of is propagated to the result")
        let replayed = snapshot.audit.filter { $0.requestID == id && $0.stage == .replayed }
        try #require(replayed.count == 1)
        #expect(replayed[0].operator == "ops.carol")
        #expect(replayed[0].program == "demo-imprint")
        #expect(Self.calls(rig, handshake: request.handshake) == 1, "the replay called the issuer again")
        #expect(snapshot.deadLetters(id, topic: topics.deadLetters).count == 1)
        #expect(snapshot.deadLetters(id, topic: topics.parked).isEmpty)
    }
}
