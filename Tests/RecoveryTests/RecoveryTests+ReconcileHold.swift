import Contract
import Foundation
import Observability
import Pipeline
import Recovery
import Testing

extension RecoveryTests {
    // MARK: - 11. The reconcile hold limit, seen per partition

    /// With room for 2 held jobs per reconcile partition, 3 jobs due in a few seconds on one
    /// partition pause it: `provisioner_partition_paused{topic=<reconcile>,partition}` is 1 while
    /// they wait, and 0 again once they ran (each answered from Imprint's state API).
    @Test("at its hold limit a reconcile partition is paused: provisioner_partition_paused is 1 for it, then 0 once its jobs ran")
    func reconcileHoldLimitShowsPerPartition() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let metrics = MetricsRegistry()
        try rig.startWorker(try rig.configuration { $0.reconcileMaxHeldPerPartition = 2 }, metrics: metrics)
        let now = Timestamps.nowMs()
        let key = Array("reconcile-hold-\(UUID().uuidString)".utf8)
        var ids: [String] = []
        var partitions: Set<Int32> = []
        for index in 0..<3 {
            let id = rig.factory.requestID("held\(index)")
            let job = ReconcileJob(requestID: id, program: "demo-imprint", issuer: .imprint, wallet: .googlePay, kind: .provision,
                                   cardID: Sensitive(Self.card()), deviceRef: nil, transactionReference: nil, windowStartMs: now - 5_000,
                                   deadlineMs: now + 60_000, attempt: 1, dueAtMs: now + 3_000, firstIndeterminateAtMs: now - 1_000, traceparent: nil)
            partitions.insert(try await rig.send(job.encodedJSON(), key: key, topic: rig.topics.reconcile).partition)
            ids.append(id)
        }
        let partition = try #require(partitions.count == 1 ? partitions.first : nil, "one key, one partition")
        let labels: MetricLabels = ["topic": rig.topics.reconcile, "partition": String(partition)]
        func gauge() -> Double? { metrics.value("provisioner_partition_paused", labels: labels) }
        func waitFor(_ value: Double, timeoutMs: Int64) async throws -> Bool {
            let deadline = Timestamps.nowMs() + timeoutMs
            while gauge() != value && Timestamps.nowMs() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            return gauge() == value
        }
        #expect(try await waitFor(1, timeoutMs: 10_000), "the partition was not shown paused while 3 jobs waited: \(String(describing: gauge()))")
        let held = ids
        try await rig.wait(for: "the three jobs' finals") { snapshot in held.allSatisfy { snapshot.final($0) != nil } }
        #expect(try await waitFor(0, timeoutMs: 10_000), "still shown paused after its jobs ran: \(String(describing: gauge()))")
        for other in 0..<Int32(rig.stack.partitions) where other != partition {
            #expect(metrics.value("provisioner_partition_paused", labels: ["topic": rig.topics.reconcile, "partition": String(other)]) != 1)
        }
    }
}
