import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Synchronization
import Testing

/// With little room for pending work the worker pauses its partitions
/// instead of buffering, answers everything, and never leaves the group for it.
@Suite("End to end: backpressure", .serialized, .timeLimit(.minutes(10)))
struct BackpressureTests {
    @Test("a small max_pending pauses partitions, everything is answered, and the worker stays in the group")
    func pausesAndAnswersEverything() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        let maxPending = 8
        let globalLimit = 4
        let worker = try rig.startWorker { configuration in
            configuration.maxPending = maxPending
            configuration.scheduler.globalLimit = globalLimit
        }
        try rig.formGroupAndWarmUp()
        let metrics = try #require(rig.metrics(of: worker))
        let assignmentsBefore = rig.logs.records.filter { $0.message == "partitions assigned" }.count

        let requests = try (0..<48).map { index in
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay,
                                      cardID: "pm_bp\(index)_\(Crypto.hex(Crypto.randomBytes(4)))-slow-250")
        }
        let ids = requests.map(\.requestID)
        // The per-partition gauge, looked at while the stream piles up (backpressure holds every
        // partition paused for seconds then): which partitions were seen paused (1).
        let partitions = (0..<rig.stack.partitions).map(String.init)
        func pausedGauge(_ partition: String) -> Double? {
            metrics.value("provisioner_partition_paused", labels: ["topic": rig.stack.topics.requests, "partition": partition])
        }
        var seenPaused: Set<String> = []
        // A stream faster than the issuer calls can drain (4 at a time, 250 ms each): about 50 a
        // second against 16, so max_pending is reached within the first second.
        for request in requests {
            try rig.send(request)
            seenPaused.formUnion(partitions.filter { pausedGauge($0) == 1 })
            usleep(20_000)
        }
        let answered = rig.collector.wait(timeoutMs: 120_000) { snapshot in ids.allSatisfy { snapshot.final($0) != nil } }
        #expect(answered, "no final result for \(rig.missingFinals(ids))")
        try rig.expectQuiet()

        let snapshot = rig.collector.snapshot
        let wrong = ids.filter { snapshot.results[$0]?.count != 1 || snapshot.final($0)?.status != .provisioned }
        #expect(wrong.isEmpty, "without exactly one provisioned result: \(wrong.map { "\($0): \(snapshot.results[$0]?.map(\.result.status.rawValue) ?? [])" })")
        #expect(rig.logs.records.contains { $0.message == "backpressure: partitions paused" })
        #expect(rig.logs.records.contains { $0.message == "backpressure: partitions resumed" })
        // The worker's own peaks, recorded where the counts rise (not sampled from outside): the
        // global limit was reached and never passed, in all and for the one program; tickets waited.
        #expect(metrics.value("provisioner_in_flight_high_water") == Double(globalLimit),
                "peak of calls in flight \(metrics.value("provisioner_in_flight_high_water") ?? -1) with a global limit of \(globalLimit)")
        #expect(metrics.value("provisioner_bulkhead_in_flight_high_water", labels: ["program": "demo-imprint"]) == Double(globalLimit))
        #expect((metrics.value("provisioner_queued_high_water") ?? 0) > 0, "nothing ever waited for a call slot")
        // The worker takes from Kafka only what max_pending leaves room for (at least one record
        // per poll), and pauses at the limit: even a poll thread starved while the stream piles
        // up never holds more (its peak is read after every poll, where the count can only have risen).
        let heldPeak = try #require(metrics.value("provisioner_unsettled_high_water"))
        #expect(heldPeak >= Double(globalLimit) && heldPeak <= Double(maxPending + 1),
                "the worker held at most \(heldPeak) requests at once with max_pending \(maxPending)")
        // Never rebalanced: no revoke, no loss, no new assignment; still owns every partition.
        let rebalances = rig.logs.records.filter { $0.message.hasPrefix("partitions revoked") || $0.message.hasPrefix("partitions lost") }
        #expect(rebalances.isEmpty, "\(rebalances.map(\.message))")
        #expect(rig.logs.records.filter { $0.message == "partitions assigned" }.count == assignmentsBefore)
        #expect(worker.assignedPartitionCount == rig.stack.partitions)
        #expect(metrics.value("provisioner_paused_partitions") == 0, "partitions still paused after the load")
        // Backpressure pauses every partition: each one's gauge was 1, and is 0 again (not absent) now.
        #expect(seenPaused == Set(partitions), "provisioner_partition_paused was 1 only for \(seenPaused.sorted())")
        #expect(partitions.allSatisfy { pausedGauge($0) == 0 }, "\(partitions.map { pausedGauge($0) as Any })")
    }
}
