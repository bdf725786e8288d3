/// A record read by a consumer.
public struct KafkaMessage: Sendable {
    /// The topic it was read from.
    public var topic: String
    /// The partition it was read from.
    public var partition: Int32
    /// Its offset in the partition.
    public var offset: Int64
    /// The key, or `nil` when the record has none.
    public var key: [UInt8]?
    /// The value (empty for a null value).
    public var value: [UInt8]
    /// The headers, in record order (names may repeat).
    public var headers: [KafkaHeader]
    /// The record timestamp in milliseconds since the epoch, when the record carries one.
    public var timestampMs: Int64?
    /// Set when the record was over the consumer's `KafkaRecordLimits`: its sizes and its value's
    /// digest. `value` and `headers` are then empty (not copied), and `key` is nil unless it was
    /// within its own limit.
    public var oversize: Oversize?

    /// Creates a message (for tests and tools; consumers build them from records).
    public init(topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8],
                headers: [KafkaHeader] = [], timestampMs: Int64? = nil, oversize: Oversize? = nil) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestampMs = timestampMs
        self.oversize = oversize
    }

    /// The value of the last header named `key`, or `nil` when absent or null.
    public func header(_ key: String) -> [UInt8]? {
        headers.last(where: { $0.key == key })?.value
    }

    /// The partition it was read from.
    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }
}
