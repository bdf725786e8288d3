import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing

extension RecoveryTests {
    // MARK: - 10. Bad records on the reconcile topic

    /// On one reconcile partition: a record that is not a job, then a job for a program this worker
    /// no longer has in its configuration, then a good job. The first is dead-lettered
    /// `invalid_reconcile_job`; the second is answered `check_wallet` and dead-lettered
    /// `reconcile_exhausted` without any issuer call; the good one behind them is still run, and the
    /// reconciliation group commits past all three.
    @Test("a poison record and a job for a program no longer configured on the reconcile topic are dead-lettered; the job behind them runs")
    func reconcileTopicPoisonDoesNotStall() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let metrics = MetricsRegistry()
        try rig.startWorker(try rig.configuration(), metrics: metrics)
        try await rig.warmUp()
        let topics = rig.topics
        let now = Timestamps.nowMs()
        func job(_ id: String, program: String, card: String) -> ReconcileJob {
            ReconcileJob(requestID: id, program: program, issuer: .imprint, wallet: .googlePay, kind: .provision, cardID: Sensitive(card),
                         deviceRef: nil, transactionReference: nil, windowStartMs: now - 5_000, deadlineMs: now + 60_000, attempt: 1,
                         dueAtMs: now, firstIndeterminateAtMs: now - 1_000, traceparent: nil)
        }
        let key = Array("reconcile-poison-\(UUID().uuidString)".utf8)
        let retiredID = rig.factory.requestID("retired"), behindID = rig.factory.requestID("behind")
        let retiredCard = Self.card(), behindCard = Self.card()
        let poison = try await rig.send(PoisonMessage.notJSON, key: key, topic: topics.reconcile)
        let retired = try await rig.send(job(retiredID, program: "retired-program", card: retiredCard).encodedJSON(), key: key, topic: topics.reconcile)
        let behind = try await rig.send(job(behindID, program: "demo-imprint", card: behindCard).encodedJSON(), key: key, topic: topics.reconcile)
        try #require(Set([poison.partition, retired.partition, behind.partition]).count == 1, "one key, one partition")

        @Sendable func fromReconcile(_ snapshot: ResultCollector.Snapshot) -> [DeadLetterEntry] {
            snapshot.deadLetters.filter { $0.topic == topics.deadLetters && $0.provenance?.originalTopic == topics.reconcile }
        }
        let snapshot = try await rig.wait(for: "both dead letters and both finals") { snapshot in
            snapshot.final(retiredID) != nil && snapshot.final(behindID) != nil && fromReconcile(snapshot).count == 2
        }
        let dead = fromReconcile(snapshot)
        let poisonEntry = try #require(dead.first { $0.provenance?.originalOffset == poison.offset })
        #expect(poisonEntry.provenance?.code == .invalidReconcileJob)
        #expect(poisonEntry.value == PoisonMessage.notJSON, "the dead letter keeps the record as it was")
        #expect(poisonEntry.provenance?.group == rig.group + ".reconcile")

        let retiredEntry = try #require(dead.first { $0.provenance?.originalOffset == retired.offset })
        #expect(retiredEntry.provenance?.code == .reconcileExhausted)
        #expect(retiredEntry.provenance?.reason.contains("not configured") == true, "\(retiredEntry.provenance?.reason ?? "")")
        #expect(ReconcileJob.decode(retiredEntry.value ?? [])?.requestID == retiredID, "the dead letter holds the job")
        let retiredFinal = try #require(snapshot.final(retiredID))
        #expect(retiredFinal.status == .indeterminate && retiredFinal.nextAction == .checkWallet, "\(retiredFinal.status) / \(retiredFinal.nextAction)")
        #expect(rig.stack.simulator.calls.filter { $0.cardID == retiredCard }.isEmpty, "no issuer is asked for a program it does not know")

        // The good job behind them ran: Imprint's state API says the card was never provisioned.
        #expect(snapshot.final(behindID)?.status == .notProvisioned, "\(snapshot.final(behindID)?.status.rawValue ?? "-")")
        // And the partition is not stuck: every job committed, nothing held.
        let idle = try await rig.waitUntilReconciliationIdle(metrics: metrics)
        #expect(idle == nil, "reconciliation did not finish: \(idle ?? "")")
        #expect(metrics.total("provisioner_dead_letters_total") == 2)
    }
}
