import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import TestSupport
import Testing

extension RecoveryTests {
    // MARK: - Issue 21 gap 4: the reconcile group rebalanced while jobs are held

    /// Twelve reconciliation jobs, six on each of the two reconcile partitions, all due 40 s from
    /// now, with `reconcile.max_held_per_partition` 3. W1 alone holds three per partition and
    /// pauses both (it fetches no more than the room left, so never a fourth). W2 joins: one
    /// reconcile partition moves to it; W1 drops the three it held there (uncommitted) and W2 reads
    /// them again and holds three. W2 leaves: the partition comes back and W1 holds three there
    /// again. When they fall due every job ends exactly once (one final result, one `reconciled`
    /// audit event), all by W1, and no worker ever held more than three jobs of one partition.
    @Test("reconcile group rebalanced while jobs are held: each job ends exactly once; the hold limit pauses and bounds each partition")
    func reconcileRebalanceWhileJobsAreHeld() async throws {
        let rig = try RecoveryRig(partitions: 2)
        defer { rig.stop() }
        let limit = 3
        let first = MetricsRegistry(), second = MetricsRegistry()
        let w1 = try rig.startWorker(try rig.configuration(workerID: "w1") { $0.reconcileMaxHeldPerPartition = limit }, metrics: first)
        let now = Timestamps.nowMs()
        let dueAtMs = now + 40_000
        var ids: [String] = []
        for partition: Int32 in 0...1 {
            for index in 0..<6 {
                let id = rig.factory.requestID("held-\(partition)-\(index)")
                let job = ReconcileJob(requestID: id, program: "demo-imprint", issuer: .imprint, wallet: .googlePay, kind: .provision,
                                       cardID: Sensitive(Self.card()), deviceRef: nil, transactionReference: nil,
                                       windowStartMs: now - 5_000, deadlineMs: now + 120_000, attempt: 1, dueAtMs: dueAtMs,
                                       firstIndeterminateAtMs: now - 1_000, traceparent: nil)
                _ = try await rig.producer.send(KafkaOutgoingMessage(topic: rig.topics.reconcile, key: Array(id.utf8), value: job.encodedJSON(),
                                                                      headers: [], partition: partition))
                ids.append(id)
            }
        }
        @Sendable func backlog(_ metrics: MetricsRegistry) -> Int { Int(metrics.value("provisioner_reconcile_backlog") ?? -1) }
        func waitFor(_ what: String, _ condition: @escaping @Sendable () -> Bool) async throws {
            let deadline = min(Timestamps.nowMs() + 30_000, dueAtMs)
            while !condition() {
                guard Timestamps.nowMs() < deadline else {
                    throw TestSupportError("waited until the jobs' due time for \(what) (backlogs \(backlog(first)), \(backlog(second))); logs:\n\(rig.recentLogs())")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        try await waitFor("W1 to hold \(limit) jobs per partition") { backlog(first) == 2 * limit }
        try await Task.sleep(for: .milliseconds(500))
        #expect(backlog(first) == 2 * limit, "W1 fetched past the hold limit while paused")
        #expect(rig.logs.records.filter { $0.message == "reconciliation partition paused: hold limit reached" }.count >= 2)

        let w2 = try rig.stack.startWorker(try rig.configuration(workerID: "w2") { $0.reconcileMaxHeldPerPartition = limit },
                                           logger: Logger(label: "w2", minimumLevel: .info, handler: rig.logs), metrics: second)
        try await waitFor("one reconcile partition to move to W2 with its held jobs") { backlog(first) == limit && backlog(second) == limit }
        await rig.stopWorker(w2)
        try await waitFor("the partition to come back to W1") { backlog(first) == 2 * limit }
        #expect(Timestamps.nowMs() < dueAtMs, "the hand-overs took \(Timestamps.nowMs() - now) ms, past the jobs' due time: the test proved nothing about held jobs")

        let jobs = ids
        try await rig.wait(for: "every job's final", timeoutMs: 90_000) { snapshot in jobs.allSatisfy { snapshot.final($0) != nil } }
        let idle = try await rig.waitUntilReconciliationIdle(metrics: first)
        #expect(idle == nil, "reconciliation did not finish: \(idle ?? "")")
        let settled = rig.collector.snapshot
        for id in ids {
            let results = settled.all(id)
            #expect(results.count == 1 && results.first?.status == .notProvisioned, "\(id): \(results.map(\.status))")
            let reconciled = settled.audit.filter { $0.requestID == id && $0.stage == .reconciled }
            #expect(reconciled.count == 1 && reconciled.first?.worker == "w1", "\(id): reconciled by \(reconciled.map { $0.worker ?? "-" })")
        }
        #expect(first.value("provisioner_reconcile_held_high_water") == Double(limit), "W1's peak per partition")
        #expect(second.value("provisioner_reconcile_held_high_water") == Double(limit), "W2's peak per partition")
        #expect(rig.logs.records.contains { $0.message == "reconciliation partitions resumed: below half the hold limit" })
        _ = w1
    }
}
