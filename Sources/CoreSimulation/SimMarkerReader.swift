import Kafka
import Pipeline

/// A simulated `MarkerLogReader`: reads the cluster's logs at once, and fails while the markers
/// partition is unreadable, or this process is cut off from it (faults of the run).
final class SimMarkerReader: MarkerLogReader, @unchecked Sendable {
    let cluster: SimCluster
    let topic: String
    /// The process reading (a process cut off from the markers fails alone).
    let process: String

    init(cluster: SimCluster, topic: String, process: String) {
        self.cluster = cluster
        self.topic = topic
        self.process = process
    }

    private func log(_ partition: Int32) throws(KafkaError) -> [KafkaMessage] {
        let topicPartition = TopicPartition(topic: topic, partition: partition)
        guard cluster.isReadable(topicPartition, by: process) else { throw KafkaError(code: .timedOut, message: "markers partition unreadable (simulated)") }
        return cluster.log(topicPartition)
    }

    func watermarks(partition: Int32) throws(KafkaError) -> (low: Int64, high: Int64) {
        _ = try log(partition)
        return cluster.watermarks(TopicPartition(topic: topic, partition: partition))
    }

    func offset(partition: Int32, atOrAfterTimestampMs timestampMs: Int64) throws(KafkaError) -> Int64? {
        try log(partition).first { ($0.timestampMs ?? 0) >= timestampMs }?.offset
    }

    func timestamp(partition: Int32, at offset: Int64) throws(KafkaError) -> Int64? {
        _ = try log(partition)
        return cluster.record(TopicPartition(topic: topic, partition: partition), at: offset)?.timestampMs
    }

    func read(partition: Int32, from: Int64, upTo: Int64, stallMs: Int64, limitMs: Int64, visit: (KafkaMessage) -> Void) -> Int64 {
        guard (try? log(partition)) != nil else { return from }
        let topicPartition = TopicPartition(topic: topic, partition: partition)
        let end = min(upTo, cluster.watermarks(topicPartition).high)
        // Below the low watermark nothing is left to read: the read starts there.
        var next = max(cluster.firstOffset, from)
        while next < end, let record = cluster.record(topicPartition, at: next) {
            visit(record)
            next += 1
        }
        return max(from, next)
    }

    func refreshMetadata() {}

    func close() {}
}
