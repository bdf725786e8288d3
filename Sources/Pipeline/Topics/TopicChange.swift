/// One step of a topic plan: create a topic, raise its partition count, or set configs.
public struct TopicChange: Sendable, Hashable {
    /// What the step does.
    public enum Action: String, Sendable, Hashable {
        /// Create the missing topic with its partitions, replication factor and configs.
        case create
        /// Add partitions up to `desiredPartitions` (Kafka never removes partitions).
        case raisePartitions = "raise_partitions"
        /// Set the configs in `configs` (other dynamic configs of the topic are kept).
        case updateConfigs = "update_configs"

        /// Words for tables (`raise partitions`).
        public var words: String { rawValue.split(separator: "_").joined(separator: " ") }
    }

    /// The role the topic plays.
    public var role: TopicRole
    /// The topic name (from the worker configuration's `topics`).
    public var topic: String
    /// What to do.
    public var action: Action
    /// Partitions on the cluster now (nil: the topic does not exist).
    public var currentPartitions: Int?
    /// Partitions after the step.
    public var desiredPartitions: Int
    /// Replication factor: the one to create with, or the topic's current one.
    public var replicationFactor: Int
    /// Configs to set: every desired entry for `create`, the differing ones for `updateConfigs`.
    public var configs: [TopicConfigChange]

    /// Creates a change.
    public init(role: TopicRole, topic: String, action: Action, currentPartitions: Int?, desiredPartitions: Int,
                replicationFactor: Int, configs: [TopicConfigChange]) {
        self.role = role
        self.topic = topic
        self.action = action
        self.currentPartitions = currentPartitions
        self.desiredPartitions = desiredPartitions
        self.replicationFactor = replicationFactor
        self.configs = configs
    }
}

