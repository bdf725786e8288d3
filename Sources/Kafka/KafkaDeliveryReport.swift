/// Where an acknowledged record was written.
public struct KafkaDeliveryReport: Sendable, Hashable {
    /// The topic.
    public var topic: String
    /// The partition the record went to.
    public var partition: Int32
    /// Its offset (-1 when the broker did not report one, as with `acks=0`).
    public var offset: Int64

    /// Creates a delivery report.
    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }
}
