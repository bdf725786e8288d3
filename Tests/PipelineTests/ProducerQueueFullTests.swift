import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing

/// The worker's own producer queue full. librdkafka refuses to enqueue
/// (`queueFull`) and the OutputPublisher waits and re-sends without spending an attempt, so every
/// request is still answered, exactly once.
@Suite("End to end: the worker's producer queue full", .serialized, .timeLimit(.minutes(5)))
struct ProducerQueueFullTests {
    @Test("queue.buffering.max.messages 2: every request answered exactly once, nothing dead-lettered")
    func everyRequestAnsweredOnce() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        let worker = try rig.startWorker { configuration in
            // Room for two records in the local queue, held back by a linger: a burst of answers,
            // markers and audit events cannot all be enqueued at once.
            configuration.kafkaProducer["queue.buffering.max.messages"] = "2"
            configuration.kafkaProducer["linger.ms"] = "20"
            // A refused enqueue must not count as an attempt: two would not survive a full queue.
            configuration.publishAttempts = 2
        }
        try rig.formGroupAndWarmUp()
        let metrics = try #require(rig.metrics(of: worker))
        let retriesBefore = metrics.value("provisioner_publish_retries_total") ?? 0

        let requests = try (0..<60).map { index in
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay,
                                      cardID: "pm_qf\(index)_\(Crypto.hex(Crypto.randomBytes(4)))")
        }
        for request in requests { try rig.send(request) }
        let ids = requests.map(\.requestID)
        #expect(rig.waitForFinals(ids, timeoutMs: 120_000), "unanswered: \(rig.missingFinals(ids).prefix(10))")
        #expect(try rig.waitUntilQuiet() == nil)

        let snapshot = rig.collector.snapshot
        let counts = ids.map { snapshot.results[$0]?.count ?? 0 }
        #expect(counts.allSatisfy { $0 == 1 }, "answers per request: \(Dictionary(grouping: counts, by: { $0 }).mapValues(\.count))")
        #expect(ids.allSatisfy { snapshot.final($0)?.status == .provisioned })
        #expect(snapshot.deadLetters.isEmpty, "\(snapshot.deadLetters.count) dead letter(s)")
        // No broker fault here: every re-send was a refused enqueue.
        let retries = (metrics.value("provisioner_publish_retries_total") ?? 0) - retriesBefore
        #expect(retries > 0, "the queue was never full: the test proves nothing")
    }
}
