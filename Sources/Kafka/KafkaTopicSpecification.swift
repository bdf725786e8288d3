/// A topic to create.
public struct KafkaTopicSpecification: Sendable, Hashable {
    /// The topic name.
    public var name: String
    /// The number of partitions (-1: the broker's default).
    public var partitions: Int
    /// The number of replicas of each partition (-1: the broker's default).
    public var replicationFactor: Int
    /// Topic configuration (`retention.ms`, `cleanup.policy`, ...).
    public var configs: [String: String]

    /// Creates a topic specification.
    public init(name: String, partitions: Int, replicationFactor: Int, configs: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configs = configs
    }
}
