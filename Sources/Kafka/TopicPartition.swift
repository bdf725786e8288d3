/// A partition of a topic.
public struct TopicPartition: Sendable, Hashable, CustomStringConvertible {
    /// The topic name.
    public var topic: String
    /// The partition number, from 0.
    public var partition: Int32

    /// Creates a topic partition.
    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    /// `topic[partition]`.
    public var description: String { "\(topic)[\(partition)]" }
}
