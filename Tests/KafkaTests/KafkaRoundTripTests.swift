import Contract
import Foundation
import Kafka
import Testing
import TestSupport

@Suite("Producer and consumer round trip", .timeLimit(.minutes(5)))
struct KafkaRoundTripTests {
    @Test("keys, headers, timestamps, explicit partitions and null values survive the round trip")
    func roundTrip() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 3)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }

        let sent = [
            KafkaOutgoingMessage(topic: topic, key: Array("card-1".utf8), value: Array("first".utf8),
                                 headers: [KafkaHeader(key: "traceparent", string: "00-abc-01"),
                                           KafkaHeader(key: "empty", value: []),
                                           KafkaHeader(key: "null", value: nil)],
                                 partition: 2, timestampMs: 1_700_000_000_123),
            KafkaOutgoingMessage(topic: topic, key: nil, value: nil, partition: 2, timestampMs: 1_700_000_000_456),
            KafkaOutgoingMessage(topic: topic, key: [], value: [], partition: 2),
        ]
        var reports: [KafkaDeliveryReport] = []
        for message in sent {
            reports.append(try await producer.send(message))
        }
        #expect(reports.map(\.partition) == [2, 2, 2])
        #expect(reports.map(\.offset) == [0, 1, 2])
        #expect(reports.allSatisfy { $0.topic == topic })

        let consumer = try cluster.consumer(group: UniqueName.make("group"))
        defer { consumer.close() }
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: 2, offset: TopicPartitionOffset.beginning)])
        let received = await Polling.messages(from: consumer, count: 3)
        try #require(received.count == 3)

        let first = received[0]
        #expect(first.topic == topic && first.partition == 2 && first.offset == 0)
        #expect(first.key == Array("card-1".utf8))
        #expect(first.value == Array("first".utf8))
        #expect(first.timestampMs == 1_700_000_000_123)
        #expect(first.headers == sent[0].headers)
        #expect(first.header("traceparent") == Array("00-abc-01".utf8))
        #expect(first.header("empty") == [])
        #expect(first.header("null") == nil)
        #expect(first.header("absent") == nil)

        #expect(received[1].key == nil)
        #expect(received[1].value == [])
        #expect(received[1].headers.isEmpty)
        #expect(received[1].timestampMs == 1_700_000_000_456)

        #expect(received[2].key == [])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let stamped = try #require(received[2].timestampMs)
        #expect(abs(stamped - now) < 60_000, "a record without a timestamp gets the produce time")
    }

    @Test("the keyed partitioner sends equal keys to the same partition")
    func keyedPartitioning() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 6)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }

        var partitionsByKey: [String: Set<Int32>] = [:]
        for round in 0..<3 {
            for index in 0..<8 {
                let key = "card-\(index)"
                let report = try await producer.send(KafkaOutgoingMessage(topic: topic, key: Array(key.utf8), value: Array("\(round)".utf8)))
                partitionsByKey[key, default: []].insert(report.partition)
            }
        }
        #expect(partitionsByKey.values.allSatisfy { $0.count == 1 })
        #expect(Set(partitionsByKey.values.flatMap { $0 }).count > 1, "8 keys over 6 partitions use more than one")
    }

    /// The partitioner the contract names for signed requests (`RequestPartitioner`) is the one
    /// librdkafka's `murmur2_random` (and Java's default) uses: a producer that lets its client pick
    /// the partition lands where the signature says.
    @Test("librdkafka's murmur2_random partitioner picks the partition RequestPartitioner computes")
    func murmur2MatchesLibrdkafka() async throws {
        let cluster = try TestCluster()
        let partitions = 7
        let topic = try cluster.makeTopic(partitions: partitions)
        let producer = try cluster.producer(["partitioner": "murmur2_random"])
        defer { producer.close(timeoutMs: 1_000) }
        var keys: [[UInt8]] = [[], Array("pm_7Hq2".utf8), Array("pm_ü€".utf8)]
        for index in 0..<40 { keys.append(Array("card-\(index)-".utf8) + Array(repeating: UInt8(index), count: index % 9)) }
        for key in keys {
            let report = try await producer.send(KafkaOutgoingMessage(topic: topic, key: key, value: [1]))
            #expect(report.partition == RequestPartitioner.partition(key: key, count: partitions), "key \(key)")
        }
    }

    @Test("delivery callbacks run on the producer's poll thread, once per record")
    func callbacksOnPollThread() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 2)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }

        let threadNames = ThreadNames()
        for index in 0..<50 {
            try producer.send(KafkaOutgoingMessage(topic: topic, value: Array("\(index)".utf8))) { result in
                threadNames.record(ThreadNames.current, succeeded: (try? result.get()) != nil)
            }
        }
        #expect(producer.flush(timeoutMs: 10_000))
        #expect(threadNames.count == 50)
        #expect(threadNames.allSucceeded)
        #expect(threadNames.names == ["kafka-producer"])
        #expect(producer.outstandingCount == 0)
    }

    @Test("partitionCount reads metadata and never creates a topic")
    func partitionCount() throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 5)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        #expect(try producer.partitionCount(topic: topic, timeoutMs: 5_000) == 5)

        let missing = UniqueName.make("missing")
        let error = try #require(throws: KafkaError.self) { try producer.partitionCount(topic: missing, timeoutMs: 5_000) }
        #expect(error.code == .unknownTopicOrPartition)
        let topics = try KafkaAdmin(configuration: ["bootstrap.servers": cluster.bootstrapServers]).listTopics(timeoutMs: 5_000)
        #expect(!topics.contains { $0.name == missing })
    }
}
