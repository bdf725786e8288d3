import Foundation
import Kafka
import Synchronization
import Testing
import TestSupport

/// Closing from inside callbacks, or dropping the last reference there, must neither deadlock nor
/// free a handle that a callback is still using.
@Suite("Shutdown from inside callbacks", .timeLimit(.minutes(5)))
struct KafkaShutdownTests {
    @Test("a producer closed from its own delivery callback still reports every other record")
    func producerClosedFromCallback() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let producer = try cluster.producer()
        let recorder = DeliveryRecorder()
        let record = recorder.callback
        try producer.send(KafkaOutgoingMessage(topic: topic, value: [0])) { result in
            record(result)
            producer.close(timeoutMs: 2_000)
        }
        for index in 1..<4 {
            try producer.send(KafkaOutgoingMessage(topic: topic, value: [UInt8(index)]), onDelivery: record)
        }
        #expect(try await Eventually.holds(within: .seconds(10)) { recorder.count == 4 }, "\(recorder.count) callbacks")
        #expect(recorder.all.allSatisfy { (try? $0.get()) != nil })
        #expect(throws: KafkaError.self) { try producer.send(KafkaOutgoingMessage(topic: topic, value: [9])) { _ in } }
    }

    @Test("a producer whose last reference goes away inside a delivery callback shuts down without deadlock")
    func producerReleasedInsideCallback() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic(partitions: 1)
        let secondDelivered = Atomic<Bool>(false)
        let watcher: ProducerWatcher
        do {
            let producer = try cluster.producer()
            watcher = ProducerWatcher(producer)
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: [0]))
            #expect(cluster.cluster.setRoundTripTime(1, milliseconds: 500) == nil)
            try producer.send(KafkaOutgoingMessage(topic: topic, value: [1])) { [producer] _ in
                _ = producer  // the last strong reference, released when this callback returns
            }
            try producer.send(KafkaOutgoingMessage(topic: topic, value: [2])) { _ in
                secondDelivered.store(true, ordering: .releasing)
            }
        }
        #expect(watcher.isAlive, "only the pending callback keeps the producer alive")
        // Had deinit waited for the poll thread it runs on, the second report would never be served.
        #expect(try await Eventually.holds(within: .seconds(15)) { secondDelivered.load(ordering: .acquiring) })
        #expect(!watcher.isAlive)
    }

    @Test("a consumer closed from its commit handler closes when that poll returns")
    func consumerClosedFromCallback() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let box = Mutex<KafkaConsumer?>(nil)
        let handled = Atomic<Int>(0)
        let consumer = try KafkaConsumer(
            configuration: KafkaTestConfiguration.consumer(bootstrapServers: cluster.bootstrapServers, group: UniqueName.make("group")),
            rebalanceListener: nil,
            commitHandler: { _ in
                handled.add(1, ordering: .relaxed)
                box.withLock { $0 }?.close()
            })
        box.withLock { $0 = consumer }
        defer { box.withLock { $0 = nil } }
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: TopicPartitionOffset.beginning)])
        try consumer.commit([TopicPartitionOffset(topic: topic, partition: 0, offset: 0)], synchronously: false)

        let closed = await DedicatedThread.run(name: "test-poll") { () -> Bool in
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while ContinuousClock.now < deadline {
                for case .failure(let error) in consumer.poll(maxMessages: 10, timeoutMs: 20) where error.code == .destroyed {
                    return true
                }
            }
            return false
        }
        #expect(closed)
        #expect(handled.load(ordering: .relaxed) == 1)
    }
}
