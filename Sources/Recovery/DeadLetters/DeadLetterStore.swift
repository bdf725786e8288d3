import Contract
import Kafka

/// Reads a dead-letter topic from its beginning to its current end (no consumer group, nothing
/// committed), for `dlq list`, `dlq show` and `dlq replay`.
public struct DeadLetterStore: Sendable {
    /// librdkafka properties (bootstrap servers, security).
    public var properties: [String: String]
    /// How long to wait for the end of the topic.
    public var timeoutMs: Int64

    /// Creates a store reader.
    public init(properties: [String: String], timeoutMs: Int64 = 20_000) {
        self.properties = properties
        self.timeoutMs = timeoutMs
    }

    /// Every entry of `topic` matching `filter`, oldest first per partition, then by time.
    public func entries(topic: String, filter: DeadLetterFilter = DeadLetterFilter()) throws(KafkaError) -> [DeadLetterEntry] {
        let configuration = KafkaConsumerRole.reader(groupID: properties["group.id"].map { $0 + ".dlq-tool" } ?? "provisioner-dlq-tool")
            .applied(to: properties)
        let consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        defer { consumer.close() }
        var entries: [DeadLetterEntry] = []
        try consumer.readToEnd(topic: topic, timeoutMs: timeoutMs, timeoutHint: "; try again or raise --timeout", start: { low, _ in low }) { message in
            let entry = DeadLetterEntry(message: message)
            if filter.matches(entry) { entries.append(entry) }
        }
        entries.sort { ($0.provenance?.failedAtMs ?? $0.timestampMs ?? 0, $0.partition, $0.offset)
            < ($1.provenance?.failedAtMs ?? $1.timestampMs ?? 0, $1.partition, $1.offset) }
        if let limit = filter.limit { entries = Array(entries.prefix(limit)) }
        return entries
    }
}
