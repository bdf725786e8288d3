import Contract
import Kafka

/// Reads a dead-letter topic to its current end (no consumer group, nothing committed), for
/// `dlq list`, `dlq show`, `dlq replay` and the console. A read holds at most the filter's limit of
/// entries at any time (the newest matching ones, in a bounded heap), and when the filter has no
/// other criterion it starts each partition at its last `limit` offsets instead of its beginning.
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

    /// The entries of `topic` matching `filter` (the newest `filter.limit` of them), oldest first.
    public func entries(topic: String, filter: DeadLetterFilter = DeadLetterFilter()) throws(KafkaError) -> [DeadLetterEntry] {
        try read(topic: topic, filter: filter).entries
    }

    /// The entries of `topic` matching `filter`, with how many records were read and the most
    /// entries held at once.
    public func read(topic: String, filter: DeadLetterFilter = DeadLetterFilter()) throws(KafkaError) -> DeadLetterRead {
        let configuration = KafkaConsumerRole.reader(groupID: properties["group.id"].map { $0 + ".dlq-tool" } ?? "provisioner-dlq-tool")
            .applied(to: properties)
        let consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        defer { consumer.close() }
        var newest = NewestEntries(capacity: filter.limit)
        var scanned = 0
        // Only the limit given: the newest entries are among each partition's last `limit` offsets.
        let tail = filter.hasCriteria ? nil : filter.limit.map(Int64.init)
        try consumer.readToEnd(topic: topic, timeoutMs: timeoutMs, timeoutHint: "; try again or raise --timeout",
                               start: { low, high in tail.map { max(low, high - $0) } ?? low }) { message in
            scanned += 1
            let entry = DeadLetterEntry(message: message)
            if filter.matches(entry) { newest.insert(entry) }
        }
        return DeadLetterRead(entries: newest.sorted(), scanned: scanned, peakRetained: newest.peak)
    }
}
