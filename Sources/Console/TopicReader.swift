import Kafka

/// Reads the newest records of a topic up to its current end by manual assignment: no consumer
/// group is joined and nothing is committed, so the workers' group never notices.
public struct TopicReader: Sendable {
    /// librdkafka properties (bootstrap servers, security).
    public var properties: [String: String]
    /// Per partition, at most this many of the newest records.
    public var perPartitionLimit: Int64
    /// How long to wait for the end.
    public var timeoutMs: Int64

    /// Creates a reader.
    public init(properties: [String: String], perPartitionLimit: Int64, timeoutMs: Int64 = 20_000) {
        self.properties = properties
        self.perPartitionLimit = perPartitionLimit
        self.timeoutMs = timeoutMs
    }

    /// Calls `visit` with every record of `topic` from `max(low, high - limit)` to the end it had
    /// when the read began.
    public func read(_ topic: String, visit: (KafkaMessage) -> Void) throws(KafkaError) {
        // Bounded buffers: what is in flight besides what the visitor keeps.
        let configuration = KafkaConsumerRole.operatorReader(groupID: "provisioner-console-reader").applied(to: properties)
        let consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        defer { consumer.close() }
        let limit = perPartitionLimit
        try consumer.readToEnd(topic: topic, timeoutMs: timeoutMs, start: { low, high in max(low, high - limit) }, visit: visit)
    }
}
