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
    // MARK: - A zombie owner after a hand-over

    /// W1 owns the single partition and has written its fence. It then turns zombie: in
    /// production its poll thread is blocked (in `committed()`, or a drain longer than the
    /// rebalance timeout) while the group hands the partition to W2, so W1 still believes it owns
    /// it. Here W1 simply never learns of the hand-over: W2 consumes in a group of its own, so both
    /// hold the partition, exactly as a zombie and its successor do. The order is forced: W2's
    /// catch-up and fence are complete (both fences are read back from the markers topic) before
    /// request R is produced, so W1's `started` marker for R always lands after W2's catch-up
    /// passed. W1 must not call the issuer (fenced out: W2's fence lies between W1's own writes and
    /// its `started` marker; it gives R up, answering nothing); W2 calls once and answers. Without
    /// fencing both call (two calls for one Apple handshake).
    @Test("zombie owner does not call after the hand-over: the new owner's fence stops its call; one call, one answer")
    func zombieOwnerDoesNotCallAfterHandOver() async throws {
        let rig = try RecoveryRig(partitions: 1)
        defer { rig.stop() }
        let zombieMetrics = MetricsRegistry(), ownerMetrics = MetricsRegistry()
        let zombie = try rig.startWorker(try rig.configuration(workerID: "zombie"), metrics: zombieMetrics)
        try await Self.waitForFences(rig, count: 1)
        var successor = try rig.configuration(workerID: "successor")
        successor.groupID = rig.group + "-successor"
        let owner = try rig.stack.startWorker(successor, extraEnvironment: rig.replayEnvironment, logger: Logger(label: "successor", minimumLevel: .info, handler: rig.logs),
                                      metrics: ownerMetrics)
        try await Self.waitForFences(rig, count: 2)

        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card())
        let id = request.requestID
        try await rig.send(request)
        try await rig.wait(for: "the answer to \(id)") { $0.final(id) != nil }
        // Both workers are done with R: each gave its verdict and holds nothing unsettled (the
        // zombie gave R up; a second call, had there been one, has been answered).
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let fenced = zombieMetrics.total("provisioner_call_fencing_total")
            if fenced >= 1 && zombie.unsettledCount == 0 && owner.unsettledCount == 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let snapshot = try await rig.wait(for: "the audit of \(id)") { snapshot in
            snapshot.audit.contains { $0.requestID == id && $0.stage == .resultPublished }
        }

        #expect(Self.calls(rig, handshake: request.handshake) == 1, "the zombie owner called the issuer after the hand-over too")
        #expect(zombieMetrics.value("provisioner_call_fencing_total", labels: ["verdict": "fenced_out"]) == 1,
                "zombie: \(zombieMetrics.renderPrometheus().split(separator: "\n").filter { $0.contains("fencing") })")
        #expect(ownerMetrics.total("provisioner_call_fencing_total") == 0, "the new owner must not be stopped")
        let results = snapshot.all(id)
        #expect(results.count == 1 && results.first?.status == .provisioned, "one answer, from the new owner: \(results.map(\.status))")
        #expect(snapshot.audit.filter { $0.requestID == id && $0.stage == .issuerCallStarted }.map(\.worker) == ["successor"])
    }

    /// Waits until partition 0 of the markers topic holds `count` owner fences.
    static func waitForFences(_ rig: RecoveryRig, count: Int, timeoutMs: Int64 = 60_000) async throws {
        var properties = rig.stack.consumerProperties
        properties["group.id"] = "fences-\(UUID().uuidString)"
        let consumer = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
        defer { consumer.close() }
        let topic = rig.topics.markers
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: 0, metadata: nil)])
            let end = try consumer.watermarks(TopicPartition(topic: topic, partition: 0), timeoutMs: 5_000).high
            var fences = 0, next: Int64 = 0
            let readBy = Timestamps.nowMs() + 5_000
            while next < end && Timestamps.nowMs() < readBy {
                for case .success(let message) in consumer.poll(maxMessages: 100, timeoutMs: 50) {
                    next = max(next, message.offset + 1)
                    if MarkerFence.decode(message.value) != nil { fences += 1 }
                }
            }
            if fences >= count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("fewer than \(count) fences in \(topic) after \(timeoutMs / 1000) s; logs:\n\(rig.recentLogs())")
    }
}
