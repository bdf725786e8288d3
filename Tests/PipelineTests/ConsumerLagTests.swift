import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import TestSupport
import Testing

@Suite("Consumer lag metric", .serialized, .timeLimit(.minutes(10)))
struct ConsumerLagTests {
    @Test("provisioner_consumer_lag reports requests waiting on the topic and falls back to 0 when caught up")
    func lagRisesUnderBackpressureAndDrains() throws {
        let stack = try EmbeddedStack(partitions: 2)
        defer { stack.stop() }
        let metrics = MetricsRegistry()
        // Tiny limits and slow cards: the worker holds back, the rest waits on the topic.
        let configuration = try stack.configuration(groupID: "lag-\(UUID().uuidString)") { configuration in
            configuration.scheduler.globalLimit = 2
            configuration.maxPending = 2
        }
        try stack.startWorker(configuration, logger: Logger(label: "worker", minimumLevel: .error, handler: CapturingLogHandler()), metrics: metrics)
        #expect(stack.waitForGroup())
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: stack.partitions)
        defer { collector.stop() }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 1)
        var ids: [String] = []
        for index in 0..<20 {
            let request = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_lag_\(index)-slow-300")
            ids.append(request.requestID)
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: request.key, value: request.value)) { _ in }
        }
        var highest = 0.0
        let deadline = Timestamps.nowMs() + 20_000
        while Timestamps.nowMs() < deadline && highest == 0 {
            highest = max(highest, metrics.value("provisioner_consumer_lag") ?? 0)
            usleep(200_000)
        }
        #expect(highest > 0, "lag was measured while requests waited on the topic")
        #expect(collector.wait(timeoutMs: 60_000) { snapshot in ids.allSatisfy { snapshot.final($0) != nil } })
        let drained = Timestamps.nowMs() + 12_000
        var last = highest
        while Timestamps.nowMs() < drained && last > 0 {
            last = metrics.value("provisioner_consumer_lag") ?? -1
            usleep(200_000)
        }
        #expect(last == 0, "lag returns to 0 once every request was received")
    }
}
