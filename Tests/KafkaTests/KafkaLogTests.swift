import Kafka
import Synchronization
import Testing

@Suite("librdkafka logs through a sink", .timeLimit(.minutes(5)))
struct KafkaLogTests {
    @Test("an installed sink receives librdkafka's warnings instead of stderr")
    func sinkReceivesConfigurationWarnings() throws {
        let received = Mutex<[KafkaLog.Record]>([])
        KafkaLog.install { record in received.withLock { $0.append(record) } }
        defer { KafkaLog.install(nil) }
        // linger.ms (alias of queue.buffering.max.ms) is a producer property: a consumer warns about it (CONFWARN).
        let consumer = try KafkaConsumer(configuration: ["bootstrap.servers": "127.0.0.1:1", "group.id": "log-test", "linger.ms": "5"],
                                         rebalanceListener: nil)
        consumer.close()
        let records = received.withLock { $0 }
        #expect(records.contains { $0.facility == "CONFWARN" && $0.message.contains("queue.buffering.max.ms") && $0.severity == 4 })
        #expect(records.allSatisfy { !$0.client.isEmpty })
    }
}
