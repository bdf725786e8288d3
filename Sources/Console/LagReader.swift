import Kafka

/// Reads the worker group's committed offsets (an OffsetFetch: no join, no subscription, no
/// commit) and the end offsets of the requests and reconcile topics.
public struct LagReader: Sendable {
    /// librdkafka properties.
    public var properties: [String: String]
    /// The workers' `group_id`.
    public var groupID: String

    /// Creates a reader.
    public init(properties: [String: String], groupID: String) {
        self.properties = properties
        self.groupID = groupID
    }

    /// Every partition of `topics`, in order.
    public func read(_ topics: [String]) throws(KafkaError) -> [PartitionLag] {
        var configuration = properties
        // The group's id is needed to fetch its offsets; without subscribe() this client never joins it.
        configuration["group.id"] = groupID
        configuration["enable.auto.commit"] = "false"
        let consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        defer { consumer.close() }
        var rows: [PartitionLag] = []
        for topic in topics {
            let count = try consumer.partitionCount(topic: topic, timeoutMs: 10_000)
            let partitions = (0..<Int32(count)).map { TopicPartition(topic: topic, partition: $0) }
            let committed = try consumer.committed(partitions, timeoutMs: 10_000)
            for partition in partitions {
                let marks = try consumer.watermarks(partition, timeoutMs: 5_000)
                let offset = committed.first { $0.partition == partition.partition }?.offset
                rows.append(PartitionLag(topic: topic, partition: partition.partition,
                                         committed: offset.flatMap { $0 >= 0 ? $0 : nil }, low: marks.low, end: marks.high))
            }
        }
        return rows
    }
}
