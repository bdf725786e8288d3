import Kafka
import TestSupport

/// A mock cluster of its own for one test, with helpers to make topics, clients and configurations.
struct TestCluster: Sendable {
    let cluster: KafkaMockCluster

    /// Starts a fresh cluster (tests that inject errors must not share one).
    init(brokers: Int = 3) throws {
        cluster = try KafkaMockCluster(brokers: brokers)
    }

    var bootstrapServers: String { cluster.bootstrapServers }

    /// Creates a topic with a unique name and returns the name.
    func makeTopic(_ prefix: String = "topic", partitions: Int = 3) throws -> String {
        let name = UniqueName.make(prefix)
        try cluster.createTopic(name, partitions: partitions, replicationFactor: min(3, cluster.brokerIDs.count))
        return name
    }

    func producer(_ overrides: [String: String] = [:]) throws -> KafkaProducer {
        try KafkaProducer(configuration: KafkaTestConfiguration.producer(bootstrapServers: bootstrapServers, overrides))
    }

    func consumer(group: String, listener: (any KafkaRebalanceListener)? = nil,
                  _ overrides: [String: String] = [:]) throws -> KafkaConsumer {
        try KafkaConsumer(configuration: KafkaTestConfiguration.consumer(bootstrapServers: bootstrapServers, group: group, overrides),
                          rebalanceListener: listener)
    }
}
