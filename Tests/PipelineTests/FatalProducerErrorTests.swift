import Contract
import Foundation
import Harness
import Kafka
import Observability
@testable import Pipeline
import Testing

/// A fatal producer error (injected with librdkafka's `rd_kafka_test_fatal_error`)
/// must never let an offset be committed whose result or dead letter was not acknowledged; the
/// worker stops fetching, fails `/readyz`, and a restarted worker answers what it held.
@Suite("End to end: a fatal producer error", .serialized, .timeLimit(.minutes(10)))
struct FatalProducerErrorTests {
    @Test("fatal producer error: a request received afterwards is not committed unanswered; fetching stops, readiness fails, the next worker answers it")
    func fatalProducerErrorCommitsNothingUnwritten() throws {
        let rig = try PipelineRig(partitions: 1)
        defer { rig.stop() }
        let first = try rig.startWorker("worker-1")
        try rig.formGroupAndWarmUp()
        let partition = TopicPartition(topic: rig.stack.topics.requests, partition: 0)
        var properties = rig.stack.consumerProperties
        properties["group.id"] = rig.groupID
        let probe = try KafkaConsumer(configuration: properties, rebalanceListener: nil)
        defer { probe.close() }
        let requestOffset = try probe.watermarks(partition, timeoutMs: 5_000).high

        first.raiseFatalProducerErrorForTesting()
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay,
                                                cardID: "pm_fatal_\(Crypto.hex(Crypto.randomBytes(4)))")
        try rig.send(request)

        #expect(PipelineRig.wait(timeoutMs: 10_000) { first.fatalError != nil }, "the worker did not notice the fatal error")
        #expect(PipelineRig.wait(timeoutMs: 10_000) { !first.isReady }, "/readyz still says ready after a fatal producer error")
        // Whatever the first worker received, it can never be acknowledged, so its offset must
        // never be committed. This asserts an absence, so it is a fixed window: 1.5 s, fifteen of
        // the commit loop's 100 ms rounds, watching the group's committed offset the whole time
        // (a commit past the request fails the test as soon as it is seen).
        _ = PipelineRig.wait(timeoutMs: 10_000) { first.unsettledCount == 0 }
        func committedOffset() -> Int64 { (try? probe.committed([partition], timeoutMs: 5_000).first?.offset) ?? -1 }
        let committedPast = PipelineRig.wait(timeoutMs: 1_500) { committedOffset() > requestOffset }
        let committed = try probe.committed([partition], timeoutMs: 5_000).first?.offset ?? -1
        #expect(!committedPast && committed <= requestOffset, "offset \(requestOffset) committed (\(committed)) with nothing written for it")

        rig.stack.stopWorker(first)
        try rig.startWorker("worker-2")
        let finalsOK = rig.waitForFinals([request.requestID], timeoutMs: 60_000)
        #expect(finalsOK, "the request was lost: no worker answered it")
        if !finalsOK { rig.printLogs(because: "the next worker did not answer") }
        #expect(rig.collector.snapshot.final(request.requestID)?.status == .provisioned)
    }
}
