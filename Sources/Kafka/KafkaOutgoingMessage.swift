/// A record to produce.
public struct KafkaOutgoingMessage: Sendable {
    /// The destination topic.
    public var topic: String
    /// The key; also picks the partition when `partition` is `nil`.
    public var key: [UInt8]?
    /// The value; `nil` produces a null value (a tombstone on compacted topics).
    public var value: [UInt8]?
    /// Headers, in order.
    public var headers: [KafkaHeader]
    /// An explicit partition, or `nil` to let the configured partitioner hash the key.
    public var partition: Int32?
    /// The record timestamp in milliseconds since the epoch, or `nil` for "now".
    public var timestampMs: Int64?

    /// Creates an outgoing record.
    public init(topic: String, key: [UInt8]? = nil, value: [UInt8]?, headers: [KafkaHeader] = [],
                partition: Int32? = nil, timestampMs: Int64? = nil) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
        self.partition = partition
        self.timestampMs = timestampMs
    }
}
