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
        (0, Int64(try log(partition).count))
    }

    func offset(partition: Int32, atOrAfterTimestampMs timestampMs: Int64) throws(KafkaError) -> Int64? {
        try log(partition).first { ($0.timestampMs ?? 0) >= timestampMs }?.offset
    }

    func timestamp(partition: Int32, at offset: Int64) throws(KafkaError) -> Int64? {
        let records = try log(partition)
        return offset >= 0 && offset < Int64(records.count) ? records[Int(offset)].timestampMs : nil
    }

    func read(partition: Int32, from: Int64, upTo: Int64, stallMs: Int64, limitMs: Int64, visit: (KafkaMessage) -> Void) -> Int64 {
        guard let records = try? log(partition) else { return from }
        let end = min(upTo, Int64(records.count))
        var next = max(0, from)
        while next < end {
            visit(records[Int(next)])
            next += 1
        }
        return max(from, next)
    }

    func refreshMetadata() {}

    func close() {}
}
