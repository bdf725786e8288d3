import Foundation
import Kafka
import Synchronization
import Testing
import TestSupport

@Suite("Consumer offsets", .timeLimit(.minutes(5)))
struct KafkaConsumerOffsetTests {
    @Test("a new member of the group resumes at the committed offset, synchronous or asynchronous, with metadata")
    func resumeAtCommittedOffset() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let partition = TopicPartition(topic: topic, partition: 0)
        let group = UniqueName.make("group")
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        for index in 0..<10 {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("m\(index)".utf8)))
        }

        let asyncCommits = Mutex<[Result<[TopicPartitionOffset], KafkaError>]>([])
        let first = try KafkaConsumer(
            configuration: KafkaTestConfiguration.consumer(bootstrapServers: cluster.bootstrapServers, group: group),
            rebalanceListener: nil,
            commitHandler: { result in asyncCommits.withLock { $0.append(result) } })
        try first.subscribe([topic])
        let read = await Polling.messages(from: first, count: 10, timeout: .seconds(20))
        try #require(read.map(\.offset) == Array(0..<10))

        try first.commit([TopicPartitionOffset(partition, offset: 4, metadata: "sync-commit")], synchronously: true)
        let afterSync = try first.committed([partition], timeoutMs: 5_000)
        #expect(afterSync == [TopicPartitionOffset(partition, offset: 4, metadata: "sync-commit")])

        try first.commit([TopicPartitionOffset(partition, offset: 6, metadata: "async-commit")], synchronously: false)
        #expect(await Polling.until(first) { asyncCommits.withLock { !$0.isEmpty } })
        let reported = try #require(asyncCommits.withLock { $0.first })
        #expect(try reported.get().map(\.offset) == [6], "only the asynchronous commit is reported: \(asyncCommits.withLock { $0 })")
        #expect(try first.committed([partition], timeoutMs: 5_000).first?.metadata == "async-commit")
        first.close()

        let second = try cluster.consumer(group: group)
        defer { second.close() }
        try second.subscribe([topic])
        let resumed = await Polling.messages(from: second, count: 1, timeout: .seconds(20))
        #expect(resumed.first?.offset == 6)
        #expect(resumed.first?.value == Array("m6".utf8))
    }

    @Test("commit metadata round-trips for manually assigned partitions; nothing committed reads as invalid")
    func commitMetadataWithoutGroupMembership() throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 2)
        let consumer = try cluster.consumer(group: UniqueName.make("group"))
        defer { consumer.close() }
        let zero = TopicPartition(topic: topic, partition: 0)
        let one = TopicPartition(topic: topic, partition: 1)
        try consumer.assign([TopicPartitionOffset(zero, offset: TopicPartitionOffset.beginning)])

        #expect(try consumer.committed([zero, one], timeoutMs: 5_000).map(\.offset) == [TopicPartitionOffset.invalid, TopicPartitionOffset.invalid])
        let metadata = "{\"worker\":\"w-1\",\"note\":\"ünïcode ✓\"}"
        try consumer.commit([TopicPartitionOffset(zero, offset: 42, metadata: metadata),
                             TopicPartitionOffset(one, offset: 7)], synchronously: true)
        let committed = try consumer.committed([zero, one], timeoutMs: 5_000)
        #expect(committed == [TopicPartitionOffset(zero, offset: 42, metadata: metadata), TopicPartitionOffset(one, offset: 7)])
    }

    @Test("storing an offset for a partition this consumer does not own fails with state")
    func storeForUnownedPartition() throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 2)
        let consumer = try cluster.consumer(group: UniqueName.make("group"), ["enable.auto.commit": "true"])
        defer { consumer.close() }
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: TopicPartitionOffset.beginning)])

        try consumer.store([TopicPartitionOffset(topic: topic, partition: 0, offset: 1)])
        let error = try #require(throws: KafkaError.self) {
            try consumer.store([TopicPartitionOffset(topic: topic, partition: 1, offset: 1)])
        }
        #expect(error.code == .state)
        #expect(error.meansPartitionNotOwned)
        #expect(error.message.contains("no longer owns"))
    }

    @Test("seek moves the position; watermarks report the log's bounds")
    func seekAndWatermarks() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let partition = TopicPartition(topic: topic, partition: 0)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        for index in 0..<5 {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: [UInt8(index)]))
        }
        let consumer = try cluster.consumer(group: UniqueName.make("group"))
        defer { consumer.close() }
        let marks = try consumer.watermarks(partition, timeoutMs: 5_000)
        #expect(marks.low == 0 && marks.high == 5)

        try consumer.assign([TopicPartitionOffset(partition, offset: TopicPartitionOffset.beginning)])
        #expect(await Polling.messages(from: consumer, count: 5).map(\.offset) == [0, 1, 2, 3, 4])
        try consumer.seek(partition, to: 2, timeoutMs: 5_000)
        #expect(await Polling.messages(from: consumer, count: 3).map(\.offset) == [2, 3, 4])
        #expect(consumer.assignment() == [partition])
    }
}
