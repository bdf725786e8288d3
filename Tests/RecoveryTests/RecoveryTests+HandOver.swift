import Contract
import Foundation
import Harness
import Kafka
import Observability
@testable import Pipeline
import Recovery
import Testing

extension RecoveryTests {
    // MARK: - 7. A partition handed over while its previous owner's call was under way

    /// Three Gnosis Pay requests (no state query) whose `started` markers a previous owner wrote
    /// before this worker took the partition. The previous owner then answers one, dead-letters
    /// one and never finishes the third: the answered one keeps that single final answer, the
    /// other two get `check_wallet` (the dead-lettered one at once, the silent one after waiting
    /// `handOverLooks` tiers). The issuer is never called by the new owner.
    @Test("hand-over: a previous owner's late answer stays the only final; silence or its dead letter gives check_wallet")
    func handOverWaitsForPreviousOwner() async throws {
        let rig = try RecoveryRig(partitions: 1, tiersMs: [500, 1_500, 3_000, 3_000])
        defer { rig.stop() }
        let topics = rig.topics

        // What the previous owner left: each request on the topic, each with a `started` marker.
        var requests: [String: GeneratedRequest] = [:]
        for name in ["answers", "dead-letters", "silent"] {
            let request = try rig.factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: Self.card("-\(name)"))
            let placed = try await rig.send(request)
            try await rig.send(Self.marker(request.requestID, state: "started", requestOffset: placed.offset, outcome: nil),
                               key: Array(request.requestID.utf8), topic: topics.markers)
            requests[name] = request
        }
        let answers = try #require(requests["answers"]), deadLetters = try #require(requests["dead-letters"])
        let silent = try #require(requests["silent"])
        let ids = [answers.requestID, deadLetters.requestID, silent.requestID]

        let metrics = MetricsRegistry()
        try rig.startWorker(try rig.configuration(), metrics: metrics)
        try await rig.wait(for: "the new owner's interim answers") { snapshot in
            ids.allSatisfy { id in snapshot.all(id).contains { !$0.isFinal && $0.status == .indeterminate } }
        }

        // The previous owner comes back from its outage: one result published, one dead-lettered.
        let late = ProvisioningResult(requestID: answers.requestID, program: "demo-gnosis", issuer: .gnosis, wallet: .applePay,
                                      kind: .provision, status: .provisioned, isFinal: true, code: nil,
                                      message: "the previous owner's answer", nextAction: .none, attempt: 1)
        try await rig.send(late.encodedJSON(), key: Array(answers.requestID.utf8), topic: topics.results)
        try await rig.send(Self.marker(answers.requestID, state: "completed", requestOffset: 0, outcome: "answered"),
                           key: Array(answers.requestID.utf8), topic: topics.markers)
        try await rig.send(Self.marker(deadLetters.requestID, state: "completed", requestOffset: 1, outcome: "dead_lettered"),
                           key: Array(deadLetters.requestID.utf8), topic: topics.markers)

        let snapshot = try await rig.wait(for: "every hand-over settled", timeoutMs: 60_000) { snapshot in
            snapshot.final(deadLetters.requestID) != nil && snapshot.final(silent.requestID) != nil
                && snapshot.audit.contains { $0.requestID == answers.requestID && $0.stage == .reconciled }
        }
        // Nothing else arrives for the answered request after its reconciliation stood down: not a
        // fixed window (the tiers go up to 3 s) but until reconciliation has no job left at all.
        let idle = try await rig.waitUntilReconciliationIdle(metrics: metrics)
        #expect(idle == nil, "reconciliation did not finish: \(idle ?? "")")
        let settled = rig.collector.snapshot

        let answeredFinals = settled.all(answers.requestID).filter(\.isFinal)
        #expect(answeredFinals.count == 1 && answeredFinals.first?.status == .provisioned,
                "the previous owner's answer is the only final: \(answeredFinals.map(\.status))")
        let stoodDown = snapshot.audit.first { $0.requestID == answers.requestID && $0.stage == .reconciled }
        #expect(stoodDown?.reason?.text == "previous_owner_answered")

        for id in [deadLetters.requestID, silent.requestID] {
            let finals = settled.all(id).filter(\.isFinal)
            #expect(finals.count == 1, "\(id): \(finals.map(\.status))")
            #expect(finals.first?.status == .indeterminate && finals.first?.nextAction == .checkWallet, "\(finals)")
        }
        // Result attempt n + 1 comes from reconciliation attempt n: the silent one waited for all
        // its looks; the dead-lettered one stopped waiting once the marker said so.
        let silentFinal = try #require(settled.final(silent.requestID))
        #expect(silentFinal.attempt == ReconcileRunner.handOverLooks + 1, "\(silentFinal.attempt)")
        let deadLetteredFinal = try #require(settled.final(deadLetters.requestID))
        #expect(deadLetteredFinal.attempt <= ReconcileRunner.handOverLooks, "\(deadLetteredFinal.attempt)")
        #expect(settled.stages(silent.requestID).filter { $0 == .reconcileScheduled }.count == ReconcileRunner.handOverLooks,
                "\(settled.stages(silent.requestID))")

        // The new owner never called the issuer for any of them.
        let handshakes = Set(rig.stack.simulator.calls.map(\.handshake))
        for request in requests.values {
            #expect(!handshakes.contains(try #require(request.handshake)), "the new owner called the issuer again")
        }
    }

    /// A call marker as a worker writes it (the markers topic's record).
    static func marker(_ requestID: String, state: String, requestOffset: Int64, outcome: String?, replayOf: String? = nil) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("request_id"); writer.string(requestID)
        writer.key("state"); writer.string(state)
        writer.key("request_offset"); writer.integer(requestOffset)
        writer.key("at"); writer.integer(Timestamps.nowMs())
        writer.key("worker"); writer.string("previous-owner")
        if let outcome { writer.key("outcome"); writer.string(outcome) }
        if let replayOf { writer.key("replay_of"); writer.string(replayOf) }
        writer.endObject()
        return writer.bytes
    }
}

extension RecoveryTests {
    @Test("reconciliation jobs and call markers keep the hand-over facts through their JSON")
    func handOverRecordsRoundTrip() throws {
        let job = ReconcileJob(requestID: "req-1", program: "demo-gnosis", issuer: .gnosis, wallet: .applePay, kind: .provision,
                               cardID: Sensitive("pm_1"), deviceRef: nil, transactionReference: nil, windowStartMs: 10, deadlineMs: 20_010,
                               attempt: 2, dueAtMs: 30, firstIndeterminateAtMs: 25, traceparent: nil,
                               handOver: ReconcileJob.MarkersPosition(markersPartition: 7, markersFrom: 1_234))
        #expect(ReconcileJob.decode(job.encodedJSON()) == job)
        var plain = job
        plain.handOver = nil
        let plainJSON = String(decoding: plain.encodedJSON(), as: UTF8.self)
        #expect(!plainJSON.contains("hand_over"), "a job without a hand-over writes no hand_over key: \(plainJSON)")
        #expect(ReconcileJob.decode(plain.encodedJSON()) == plain)
        // A damaged hand_over is dropped, not fatal: the job is still reconciled.
        let damaged = plainJSON.replacingOccurrences(of: "\"traceparent\"", with: "\"hand_over\":{\"markers_partition\":-1,\"markers_from\":5},\"traceparent\"")
        #expect(ReconcileJob.decode(Array(damaged.utf8)) == plain)

        for outcome in [CallMarker.Outcome.answered, .deadLettered, .recovered] {
            let marker = CallMarker(requestID: "req-1", program: "prog-a", state: .completed, requestOffset: 3, atMs: 4, worker: "w", outcome: outcome)
            #expect(CallMarker.decode(marker.message(topic: "m", partition: 0).value ?? []) == marker)
        }
        // Markers written before the outcome field existed still read (as `completed`, no outcome).
        let old = Array(#"{"request_id":"req-1","state":"completed","request_offset":3,"at":4,"worker":"w"}"#.utf8)
        #expect(CallMarker.decode(old)?.outcome == nil)
        #expect(CallMarker.decode(old)?.state == .completed)
    }
}
