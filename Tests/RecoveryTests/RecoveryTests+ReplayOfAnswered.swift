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
    // MARK: - A replay never calls the issuer for a request that has its answer

    /// One copy of a request dead-lettered (sealed as a worker writes a `publish_failed` letter:
    /// replayable), another copy answered `provisioned`; the operator then replays the dead letter
    /// with the built `dlq replay`, to a worker started since. The worker treats the replay as a duplicate of the answered
    /// request: the simulated issuer's log shows the handshake once, and the request has one final.
    @Test("dlq replay of a dead-lettered copy of a request answered since reaches no issuer and adds no final")
    func replayOfAnsweredRequestIsADuplicate() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let first = try rig.startWorker(try rig.configuration(workerID: "worker-replay-answered"))
        let topics = rig.topics
        let card = Self.card("replay-answered")
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card,
                                                requestID: rig.factory.requestID("replay-answered"))
        // The answered copy.
        let sent = try await rig.send(request)
        try await rig.wait(for: "the answer to \(request.requestID)") { $0.final(request.requestID) != nil }
        let callsBefore = rig.stack.simulator.calls.filter { $0.cardID == card }.map(\.count).reduce(0, +)
        #expect(callsBefore == 1, "the answered copy called the issuer once")

        // A worker that did not answer it (no copy of it in memory) reads the answer back from
        // the markers (the duplicate horizon) when it takes the partition.
        await rig.stopWorker(first)
        _ = try rig.startWorker(try rig.configuration(workerID: "worker-replay-fresh"))

        // The dead-lettered copy: the same record, at the answered copy's partition, as a worker seals it.
        let now = Timestamps.nowMs()
        let builder = DeadLetterBuilder(deadLetterTopic: topics.deadLetters, parkedTopic: topics.parked, worker: "worker-replay-answered",
                                        group: rig.group, seal: DeadLetterSeal(key: Sensitive(rig.replayKey)))
        let verdict = DeadLetterReplayPolicy.verdict(code: .publishFailed, summary: DeadLetterSummary(value: request.value, recordTimestampMs: now),
                                                     issuerMayHaveBeenCalled: false, nowMs: now)
        let letter = builder.letter(key: request.key, value: request.value, headers: [],
                                    source: .init(partition: TopicPartition(topic: topics.requests, partition: sent.partition),
                                                  offset: sent.offset + 1, timestampMs: now),
                                    code: .publishFailed, reason: "the result could not be published", attempts: 1, firstFailedAtMs: now,
                                    nowMs: now, replayOf: nil, replay: verdict, parkedReason: "").message
        _ = try await rig.producer.send(letter)

        let run = try await rig.operatorTool.dlq(["replay", "--json", "--operator", "ops.eve", "--request-id", request.requestID])
        let outcomes = try DLQListing.entries(json: run.standardOutput)
        #expect(outcomes.map { $0["result"]?.stringValue } == ["replayed"], "\(run)")

        let snapshot = try await rig.wait(for: "the replay of \(request.requestID) judged a duplicate") {
            $0.stages(request.requestID).contains(.duplicateIgnored)
        }
        #expect(rig.stack.simulator.calls.filter { $0.cardID == card }.map(\.count).reduce(0, +) == 1,
                "the replay called the issuer again: \(rig.stack.simulator.calls.filter { $0.cardID == card })")
        let finals = snapshot.results[request.requestID]?.filter(\.result.isFinal) ?? []
        #expect(finals.count == 1, "finals: \(finals.map(\.result.status))")
        #expect(finals.first?.result.status == .provisioned)
    }
}
