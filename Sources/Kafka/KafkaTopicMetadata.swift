/// A topic as the cluster's metadata describes it.
public struct KafkaTopicMetadata: Sendable, Hashable {
    /// The topic name.
    public var name: String
    /// The number of partitions.
    public var partitions: Int
    /// The number of replicas of the first partition (the usual replication factor).
    public var replicationFactor: Int

    /// Creates topic metadata.
    public init(name: String, partitions: Int, replicationFactor: Int) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
    }
}
