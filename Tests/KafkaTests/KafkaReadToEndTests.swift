import Foundation
import Kafka
import Testing
import TestSupport

/// `KafkaConsumer.readToEnd`, the one read loop behind `dlq` (DeadLetterStore) and the console's
/// topic reads (TopicReader): from the chosen start to the end each partition had when it began.
@Suite("Consumer: read a topic to its end by manual assignment", .timeLimit(.minutes(2)))
struct KafkaReadToEndTests {
    @Test("from the start: every record once; from high - 2: the last two per partition; an empty topic returns at once; nothing committed")
    func readsToTheEnd() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic(partitions: 3)
        let empty = try cluster.makeTopic("empty", partitions: 2)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        for index in 0..<15 {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("m\(index)".utf8), partition: Int32(index % 3)))
        }
        let group = UniqueName.make("read-to-end")
        func read(_ topic: String, start: (Int64, Int64) -> Int64) throws -> [(Int32, Int64, String)] {
            let consumer = try cluster.consumer(group: group, ["enable.auto.commit": "false"])
            defer { consumer.close() }
            var seen: [(Int32, Int64, String)] = []
            try consumer.readToEnd(topic: topic, timeoutMs: 20_000, start: start) { seen.append(($0.partition, $0.offset, String(decoding: $0.value, as: UTF8.self))) }
            return seen
        }
        let all = try read(topic) { low, _ in low }
        #expect(all.count == 15 && Set(all.map(\.2)) == Set((0..<15).map { "m\($0)" }), "\(all)")
        for partition in Int32(0)..<3 {
            #expect(all.filter { $0.0 == partition }.map(\.1) == [0, 1, 2, 3, 4], "partition \(partition) in order, once")
        }
        let newest = try read(topic) { low, high in max(low, high - 2) }
        #expect(newest.map(\.1).sorted() == [3, 3, 3, 4, 4, 4], "\(newest)")
        #expect(Set(newest.map(\.2)) == Set([9, 10, 11, 12, 13, 14].map { "m\($0)" }))
        #expect(try read(empty) { low, _ in low }.isEmpty)

        let probe = try cluster.consumer(group: group)
        defer { probe.close() }
        let committed = try probe.committed((0..<3).map { TopicPartition(topic: topic, partition: $0) }, timeoutMs: 5_000)
        #expect(committed.allSatisfy { $0.offset == TopicPartitionOffset.invalid }, "\(committed)")
    }
}
