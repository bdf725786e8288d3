import Kafka
import Synchronization

/// Hands a group consumer's rebalance callbacks to the loop that owns it, without the consumer
/// holding the loop for good (the loop detaches when it ends); part of `ConsumerLoop`. Callbacks
/// run on the loop's poll thread, inside `poll` (see `KafkaRebalanceListener`).
final class RebalanceRelay: KafkaRebalanceListener {
    /// What the loop does on each callback.
    struct Handlers: Sendable {
        var assigned: @Sendable ([TopicPartition]) -> Void
        var revoked: @Sendable ([TopicPartition]) -> Void
        var lost: @Sendable ([TopicPartition]) -> Void
    }

    private let handlers = Mutex<Handlers?>(nil)

    /// Sets the loop's handlers.
    func attach(_ handlers: Handlers) { self.handlers.withLock { $0 = handlers } }

    /// Drops the loop's handlers (the loop has ended).
    func detach() { handlers.withLock { $0 = nil } }

    func partitionsAssigned(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        handlers.withLock { $0 }?.assigned(partitions)
    }

    func partitionsRevoked(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        handlers.withLock { $0 }?.revoked(partitions)
    }

    func partitionsLost(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        handlers.withLock { $0 }?.lost(partitions)
    }
}
