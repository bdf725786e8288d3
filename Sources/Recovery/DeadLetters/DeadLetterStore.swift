import Contract
import Kafka

/// Reads a dead-letter topic to its current end (no consumer group, nothing committed), for
/// `dlq list`, `dlq show`, `dlq replay` and the console. A read keeps summaries, not bodies
/// (`DeadLetterEntry.summarized`), and at most `DeadLetterFilter.maximumLimit` of them whatever
/// the filter asks (the newest matching ones, in a bounded heap); when the filter has no other
/// criterion it starts each partition at its last `limit` offsets instead of its beginning. The
/// body of one letter is read again by its offset (`letter`) when it is shown or replayed.
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

    /// A reader whose buffers are bounded (`KafkaConsumerRole.operatorReader`): what is in flight
    /// besides the summaries kept, with records up to a megabyte each.
    private func consumer() throws(KafkaError) -> KafkaConsumer {
        let configuration = KafkaConsumerRole.operatorReader(groupID: properties["group.id"].map { $0 + ".dlq-tool" } ?? "provisioner-dlq-tool")
            .applied(to: properties)
        return try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
    }

    /// The entries of `topic` matching `filter` (the newest `filter.limit` of them, at most
    /// `DeadLetterFilter.maximumLimit`), oldest first, as summaries; `keys` check each one's
    /// `dlq.mac` at `nowMs` while its body is at hand.
    public func entries(topic: String, filter: DeadLetterFilter = DeadLetterFilter(), keys: ReplayKeyring? = nil,
                        nowMs: Int64 = 0) throws(KafkaError) -> [DeadLetterEntry] {
        try read(topic: topic, filter: filter, keys: keys, nowMs: nowMs).entries
    }

    /// The entries of `topic` matching `filter` (see `entries`), with how many records were read
    /// and the most entries (and bytes) held at once.
    public func read(topic: String, filter: DeadLetterFilter = DeadLetterFilter(), keys: ReplayKeyring? = nil,
                     nowMs: Int64 = 0) throws(KafkaError) -> DeadLetterRead {
        let consumer = try consumer()
        defer { consumer.close() }
        let limit = min(filter.limit ?? DeadLetterFilter.maximumLimit, DeadLetterFilter.maximumLimit)
        var newest = NewestEntries(capacity: limit)
        var scanned = 0
        // Only the limit given: the newest entries are among each partition's last `limit` offsets.
        let tail = filter.hasCriteria ? nil : Int64(limit)
        try consumer.readToEnd(topic: topic, timeoutMs: timeoutMs, timeoutHint: "; try again or raise --timeout",
                               start: { low, high in tail.map { max(low, high - $0) } ?? low }) { message in
            scanned += 1
            let entry = DeadLetterEntry(message: message)
            if filter.matches(entry) { newest.insert(entry.summarized(checking: keys, nowMs: nowMs)) }
        }
        return DeadLetterRead(entries: newest.sorted(), scanned: scanned, peakRetained: newest.peak, peakRetainedBytes: newest.peakBytes)
    }

    /// The whole letter (key, value, every header) at `reference`, read by its offset; nil when
    /// the topic no longer holds it.
    public func letter(_ reference: ReplayReference) throws(KafkaError) -> DeadLetterEntry? {
        let consumer = try consumer()
        defer { consumer.close() }
        return try consumer.readOne(topic: reference.topic, partition: reference.partition, offset: reference.offset, timeoutMs: timeoutMs)
            .map { DeadLetterEntry(message: $0) }
    }
}
