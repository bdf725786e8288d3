import Dispatch
import Kafka
import Observability

/// Reads a markers partition from a position up to its end (one reader, one partition at a time,
/// on its own queue) to learn which calls a previous owner started and did not finish.
final class MarkerCatchUp: Sendable {
    private let consumer: KafkaConsumer
    private let topic: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "provisioner.marker-catch-up")
    private let timeoutMs: Int64

    init(properties: [String: String], topic: String, logger: Logger, timeoutMs: Int64 = 30_000) throws(KafkaError) {
        var configuration = properties
        configuration["group.id"] = (configuration["group.id"] ?? "provisioner") + ".marker-reader"
        configuration["enable.auto.commit"] = "false"
        configuration["auto.offset.reset"] = "earliest"
        consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        self.topic = topic
        self.logger = logger
        self.timeoutMs = timeoutMs
    }

    /// Reads markers partition `partition` from `position` (its start when nil) to its end and
    /// calls `completion` with the latest state per request id. On failure it reports what it
    /// could read and logs why.
    func read(partition: Int32, from position: Int64?, completion: @escaping @Sendable ([String: CallMarker.State]) -> Void) {
        queue.async { [self] in
            completion(readNow(partition: partition, from: position))
        }
    }

    private func readNow(partition: Int32, from position: Int64?) -> [String: CallMarker.State] {
        let topicPartition = TopicPartition(topic: topic, partition: partition)
        var states: [String: CallMarker.State] = [:]
        let marks: (low: Int64, high: Int64)
        do {
            marks = try consumer.watermarks(topicPartition, timeoutMs: 5_000)
        } catch {
            logger.error("marker catch-up could not read watermarks; redelivered calls will not be recognised",
                         [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
            return states
        }
        let start = max(marks.low, position ?? marks.low)
        guard start < marks.high else { return states }
        do {
            try consumer.assign([TopicPartitionOffset(topic: topic, partition: partition, offset: start, metadata: nil)])
        } catch {
            logger.error("marker catch-up could not assign", [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
            return states
        }
        defer { try? consumer.assign([]) }
        let deadline = Timestamps.nowMs() + timeoutMs
        var next = start
        while next < marks.high && Timestamps.nowMs() < deadline {
            for result in consumer.poll(maxMessages: 1_000, timeoutMs: 50) {
                guard case .success(let message) = result else { continue }
                next = max(next, message.offset + 1)
                if let marker = CallMarker.decode(message.value) {
                    if states[marker.requestID] != .completed { states[marker.requestID] = marker.state }
                }
            }
        }
        if next < marks.high {
            logger.error("marker catch-up timed out before the end of the partition",
                         [("partition", .integer(Int64(partition))), ("read_to", .integer(next)), ("end", .integer(marks.high))])
        }
        return states
    }

    /// Closes the reader.
    func close() {
        queue.sync { consumer.close() }
    }
}
