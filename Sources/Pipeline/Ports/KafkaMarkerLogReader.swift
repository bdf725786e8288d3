import Kafka
import Observability

/// The production `MarkerLogReader`: a consumer of the markers topic that is never a group member
/// (`KafkaConsumerRole.reader`), assigned one partition for each read and unassigned after it.
/// Wall-clock time bounds its reads. Not thread-safe by itself: one serial queue uses it.
package final class KafkaMarkerLogReader: MarkerLogReader {
    private let consumer: KafkaConsumer
    private let topic: String

    /// A reader of `topic` for `purpose` (its consumer's group id suffix); `properties` are the
    /// worker's consumer properties, `overrides` set on top (e.g. a short `fetch.wait.max.ms`).
    package init(properties: [String: String], topic: String, purpose: String, overrides: [String: String] = [:]) throws(KafkaError) {
        var configuration = KafkaConsumerRole.reader(groupID: (properties["group.id"] ?? "provisioner") + "." + purpose).applied(to: properties)
        for (key, value) in overrides where configuration[key] == nil { configuration[key] = value }
        consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        self.topic = topic
    }

    private func topicPartition(_ partition: Int32) -> TopicPartition {
        TopicPartition(topic: topic, partition: partition)
    }

    package func watermarks(partition: Int32) throws(KafkaError) -> (low: Int64, high: Int64) {
        try consumer.watermarks(topicPartition(partition), timeoutMs: 5_000)
    }

    package func offset(partition: Int32, atOrAfterTimestampMs timestampMs: Int64) throws(KafkaError) -> Int64? {
        try consumer.offset(topicPartition(partition), atOrAfterTimestampMs: timestampMs, timeoutMs: 5_000)
    }

    package func timestamp(partition: Int32, at offset: Int64) throws(KafkaError) -> Int64? {
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: partition, offset: offset, metadata: nil)])
        defer { try? consumer.assign([]) }
        let deadline = Timestamps.nowMs() + 5_000
        while Timestamps.nowMs() < deadline {
            for result in consumer.poll(maxMessages: 1, timeoutMs: 50) {
                if case .success(let message) = result, message.offset >= offset { return message.timestampMs }
            }
        }
        throw KafkaError(code: .timedOut, message: "reading the record at \(offset) of \(topicPartition(partition)) timed out")
    }

    package func read(partition: Int32, from: Int64, upTo: Int64, stallMs: Int64, limitMs: Int64, visit: (KafkaMessage) -> Void) -> Int64 {
        guard from < upTo else { return upTo }
        do {
            try consumer.assign([TopicPartitionOffset(topic: topic, partition: partition, offset: from, metadata: nil)])
        } catch {
            return from
        }
        defer { try? consumer.assign([]) }
        let started = Timestamps.nowMs()
        var stalledAt = started + stallMs
        var next = from
        while next < upTo {
            let now = Timestamps.nowMs()
            guard now < stalledAt, now - started < limitMs else { break }
            for result in consumer.poll(maxMessages: 1_000, timeoutMs: 20) {
                guard case .success(let message) = result, message.partition == partition, message.offset >= next else { continue }
                stalledAt = Timestamps.nowMs() + stallMs
                next = message.offset + 1
                if message.offset < upTo { visit(message) }
            }
        }
        return min(next, upTo)
    }

    package func refreshMetadata() {
        _ = try? consumer.partitionCount(topic: topic, timeoutMs: 2_000)
    }

    package func close() {
        consumer.close()
    }
}
