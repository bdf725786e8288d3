import Kafka
import Observability

/// Reads the newest records of a topic up to its current end by manual assignment: no consumer
/// group is joined and nothing is committed, so the workers' group never notices.
public struct TopicReader: Sendable {
    /// librdkafka properties (bootstrap servers, security).
    public var properties: [String: String]
    /// Per partition, at most this many of the newest records.
    public var perPartitionLimit: Int64
    /// How long to wait for the end.
    public var timeoutMs: Int64

    /// Creates a reader.
    public init(properties: [String: String], perPartitionLimit: Int64, timeoutMs: Int64 = 20_000) {
        self.properties = properties
        self.perPartitionLimit = perPartitionLimit
        self.timeoutMs = timeoutMs
    }

    /// Calls `visit` with every record of `topic` from `max(low, high - limit)` to the end it had
    /// when the read began.
    public func read(_ topic: String, visit: (KafkaMessage) -> Void) throws(KafkaError) {
        var configuration = properties
        configuration["group.id"] = "provisioner-console-reader"
        configuration["enable.auto.commit"] = "false"
        configuration["enable.auto.offset.store"] = "false"
        let consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        defer { consumer.close() }
        let count = try consumer.partitionCount(topic: topic, timeoutMs: 10_000)
        var ends: [Int32: Int64] = [:]
        var starts: [TopicPartitionOffset] = []
        for partition in 0..<Int32(count) {
            let marks = try consumer.watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 5_000)
            guard marks.high > marks.low else { continue }
            ends[partition] = marks.high
            starts.append(TopicPartitionOffset(topic: topic, partition: partition, offset: max(marks.low, marks.high - perPartitionLimit),
                                               metadata: nil))
        }
        guard !starts.isEmpty else { return }
        try consumer.assign(starts)
        var next: [Int32: Int64] = Dictionary(uniqueKeysWithValues: starts.map { ($0.partition, $0.offset) })
        let deadline = Timestamps.nowMs() + timeoutMs
        while next.contains(where: { $0.value < ends[$0.key]! }) {
            guard Timestamps.nowMs() < deadline else {
                throw KafkaError(code: .timedOut, message: "reading \(topic) did not reach its end within \(timeoutMs) ms")
            }
            for result in consumer.poll(maxMessages: 1_000, timeoutMs: 100) {
                guard case .success(let message) = result else { continue }
                next[message.partition] = max(next[message.partition] ?? 0, message.offset + 1)
                guard message.offset < ends[message.partition] ?? 0 else { continue }
                visit(message)
            }
        }
    }
}
