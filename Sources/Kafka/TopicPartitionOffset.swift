/// A partition with an offset and optional commit metadata.
///
/// For commits, `offset` is the next offset to read (last processed + 1), as Kafka expects.
public struct TopicPartitionOffset: Sendable, Hashable, CustomStringConvertible {
    /// The topic name.
    public var topic: String
    /// The partition number.
    public var partition: Int32
    /// The offset, or one of the logical offsets (`beginning`, `end`, `stored`, `invalid`).
    public var offset: Int64
    /// Commit metadata stored with the offset, if any.
    public var metadata: String?

    /// Logical offset: the first message of the partition.
    public static let beginning: Int64 = -2
    /// Logical offset: after the last message of the partition.
    public static let end: Int64 = -1
    /// Logical offset: the committed offset of the group.
    public static let stored: Int64 = -1000
    /// Logical offset: no offset (nothing committed).
    public static let invalid: Int64 = -1001

    /// Creates a partition offset.
    public init(topic: String, partition: Int32, offset: Int64, metadata: String? = nil) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.metadata = metadata
    }

    /// Creates a partition offset for `partition`.
    public init(_ partition: TopicPartition, offset: Int64, metadata: String? = nil) {
        self.init(topic: partition.topic, partition: partition.partition, offset: offset, metadata: metadata)
    }

    /// The partition without offset.
    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }

    /// `topic[partition]@offset`.
    public var description: String { "\(topic)[\(partition)]@\(offset)" }
}
