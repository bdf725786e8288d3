import Contract
import Kafka
#if canImport(Glibc)
import Glibc
#endif

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
        var configuration = properties
        configuration["group.id"] = configuration["group.id"].map { $0 + ".dlq-tool" } ?? "provisioner-dlq-tool"
        configuration["enable.auto.commit"] = "false"
        let consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        defer { consumer.close() }
        let count = try consumer.partitionCount(topic: topic, timeoutMs: 10_000)
        var ends: [Int32: Int64] = [:]
        var starts: [TopicPartitionOffset] = []
        for partition in 0..<Int32(count) {
            let marks = try consumer.watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 5_000)
            guard marks.high > marks.low else { continue }
            ends[partition] = marks.high
            starts.append(TopicPartitionOffset(topic: topic, partition: partition, offset: marks.low, metadata: nil))
        }
        guard !starts.isEmpty else { return [] }
        try consumer.assign(starts)
        var entries: [DeadLetterEntry] = []
        var next: [Int32: Int64] = Dictionary(uniqueKeysWithValues: starts.map { ($0.partition, $0.offset) })
        let deadline = Self.now() + timeoutMs
        while next.contains(where: { $0.value < ends[$0.key]! }) {
            guard Self.now() < deadline else {
                throw KafkaError(code: .timedOut, message: "reading \(topic) did not reach its end within \(timeoutMs) ms; try again or raise --timeout")
            }
            for result in consumer.poll(maxMessages: 1_000, timeoutMs: 100) {
                guard case .success(let message) = result else { continue }
                next[message.partition] = max(next[message.partition] ?? 0, message.offset + 1)
                guard message.offset < ends[message.partition] ?? 0 else { continue }
                let entry = DeadLetterEntry(message: message)
                if filter.matches(entry) { entries.append(entry) }
            }
        }
        entries.sort { ($0.provenance?.failedAtMs ?? $0.timestampMs ?? 0, $0.partition, $0.offset)
            < ($1.provenance?.failedAtMs ?? $1.timestampMs ?? 0, $1.partition, $1.offset) }
        if let limit = filter.limit { entries = Array(entries.prefix(limit)) }
        return entries
    }

    private static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
