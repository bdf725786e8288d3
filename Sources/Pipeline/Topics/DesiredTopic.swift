/// What one topic should look like on the cluster: partitions, replication and topic configs.
public struct DesiredTopic: Sendable, Hashable {
    /// Partition count (raised to this, never lowered).
    public var partitions: Int
    /// Replicas of each partition (set at creation; changing it needs a partition reassignment).
    public var replicationFactor: Int
    /// Topic-level configuration entries (`retention.ms`, `cleanup.policy`, `min.insync.replicas`, ...).
    public var configs: [String: String]

    /// Creates a desired topic.
    public init(partitions: Int, replicationFactor: Int, configs: [String: String]) {
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configs = configs
    }
}
