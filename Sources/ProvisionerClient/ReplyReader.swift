import Contract
import Foundation
import Kafka
import Synchronization

/// Reads the client's own reply partition: assigned by hand (no consumer group, no rebalance) and
/// positioned at its high watermark before the client sends anything, so no answer can be
/// written before the reader is in place (the classic request-reply race).
///
/// Threads: one poll thread ("provisioner-client-replies") is the only one that polls; `stop` may
/// be called from any thread and waits for it to leave.
final class ReplyReader: Sendable {
    private let consumer: KafkaConsumer
    private let pending: PendingReplies
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// The partition read.
    let partition: TopicPartition

    /// Assigns `partition` at its high watermark (asked of its leader) and starts the poll thread.
    init(properties: [String: String], fetchWaitMs: Int, partition: TopicPartition, pending: PendingReplies) throws(KafkaError) {
        self.partition = partition
        self.pending = pending
        consumer = try KafkaConsumer(configuration: Self.properties(properties, fetchWaitMs: fetchWaitMs), rebalanceListener: nil)
        do {
            let high = try consumer.watermarks(partition, timeoutMs: 10_000).high
            try consumer.assign([TopicPartitionOffset(partition, offset: high)])
        } catch {
            consumer.close()
            throw error
        }
        let thread = Thread { [self] in run() }
        thread.name = "provisioner-client-replies"
        thread.start()
    }

    /// Consumer properties for a hand-assigned reader: a group id librdkafka wants but never uses
    /// (nothing is subscribed or committed), a short fetch wait.
    static func properties(_ kafka: [String: String], fetchWaitMs: Int) -> [String: String] {
        var properties = kafka
        properties["group.id"] = properties["group.id"] ?? "provisioner-client-unused"
        properties["enable.auto.commit"] = "false"
        properties["enable.auto.offset.store"] = "false"
        properties["fetch.wait.max.ms"] = String(fetchWaitMs)
        return properties
    }

    private func run() {
        while !stopping.load(ordering: .acquiring) {
            for item in consumer.poll(maxMessages: 512, timeoutMs: 50) {
                guard case .success(let message) = item else { continue }
                pending.deliver(correlation: message.header(ReplyRoute.correlationHeader), value: message.value)
            }
        }
        consumer.close()
        finished.signal()
    }

    /// Stops the poll thread and closes the consumer.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }
}
