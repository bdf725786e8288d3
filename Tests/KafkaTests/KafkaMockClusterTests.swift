import Kafka
import Testing
import TestSupport

@Suite("Mock cluster controls", .timeLimit(.minutes(5)))
struct KafkaMockClusterTests {
    @Test("bootstrap servers name one loopback port per broker; topics cannot be created twice")
    func basics() throws {
        let cluster = try KafkaMockCluster(brokers: 2)
        defer { cluster.close() }
        let servers = cluster.bootstrapServers.split(separator: ",")
        #expect(servers.count == 2)
        #expect(servers.allSatisfy { $0.hasPrefix("127.0.0.1:") })
        #expect(cluster.brokerIDs == [1, 2])

        let topic = UniqueName.make("topic")
        try cluster.createTopic(topic, partitions: 2, replicationFactor: 2)
        let duplicate = #expect(throws: KafkaError.self) { try cluster.createTopic(topic, partitions: 2, replicationFactor: 2) }
        #expect(duplicate?.code == .topicAlreadyExists)
        #expect(cluster.setBrokerDown(99) != nil, "an unknown broker id is reported")
        #expect(throws: KafkaError.self) { try KafkaMockCluster(brokers: 0) }
    }

    @Test("a producer keeps delivering when the partition leader moves and after a broker comes back")
    func leaderMoveAndBrokerRestart() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let producer = try cluster.producer(["retry.backoff.ms": "20"])
        defer { producer.close(timeoutMs: 1_000) }
        #expect(try await producer.send(KafkaOutgoingMessage(topic: topic, value: [0])).offset == 0)

        #expect(cluster.cluster.setPartitionLeader(topic: topic, partition: 0, brokerID: 2) == nil)
        #expect(try await producer.send(KafkaOutgoingMessage(topic: topic, value: [1])).offset == 1)

        #expect(cluster.cluster.setBrokerDown(2) == nil)
        let recorder = DeliveryRecorder()
        try producer.send(KafkaOutgoingMessage(topic: topic, value: [2]), onDelivery: recorder.callback)
        #expect(cluster.cluster.setBrokerUp(2) == nil)
        #expect(producer.flush(timeoutMs: 10_000))
        #expect(try recorder.all.first?.get().offset == 2)
    }

    @Test("a round-trip time delays acknowledgements by at least that long")
    func roundTripTime() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic(partitions: 1)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: [0]))
        #expect(cluster.cluster.setRoundTripTime(1, milliseconds: 300) == nil)
        let started = ContinuousClock.now
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: [1]))
        #expect(ContinuousClock.now - started >= .milliseconds(290))
    }

    @Test("calls after close fail instead of touching freed memory")
    func closedCluster() throws {
        let cluster = try KafkaMockCluster(brokers: 1)
        cluster.close()
        cluster.close()
        #expect(throws: KafkaError.self) { try cluster.createTopic("t", partitions: 1, replicationFactor: 1) }
        #expect(cluster.setBrokerUp(1)?.code == .destroyed)
        cluster.pushRequestErrors(apiKey: .produce, errors: [.notLeaderForPartition])
        cluster.setTopicError("t", error: .unknownTopicOrPartition)
    }
}
