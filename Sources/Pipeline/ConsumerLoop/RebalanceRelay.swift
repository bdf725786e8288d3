import Kafka
import Synchronization

/// Hands a group consumer's rebalance callbacks to the loop that owns it, without the consumer
/// holding the loop for good (the loop detaches when it ends); part of `ConsumerLoop`. Callbacks
/// run on the loop's poll thread, inside `poll` (see `KafkaRebalanceListener`).
package final class RebalanceRelay: KafkaRebalanceListener {
    /// What the loop does on each callback.
    struct Handlers: Sendable {
        var assigned: @Sendable ([TopicPartition]) -> Void
        /// `.deferred`: the loop drains the partitions and gives them up later (`ConsumerLoop.finishRevoke`).
        var revoked: @Sendable ([TopicPartition]) -> KafkaRevokeCompletion
        var lost: @Sendable ([TopicPartition]) -> Void
    }

    private let handlers = Mutex<Handlers?>(nil)

    /// Sets the loop's handlers.
    func attach(_ handlers: Handlers) { self.handlers.withLock { $0 = handlers } }

    /// Drops the loop's handlers (the loop has ended).
    func detach() { handlers.withLock { $0 = nil } }

    /// Partitions were assigned (a `GroupConsumer` calls this inside `poll`).
    package func assigned(_ partitions: [TopicPartition]) {
        handlers.withLock { $0 }?.assigned(partitions)
    }

    /// Partitions are revoked: whether the loop gives them up now or defers it.
    package func revoked(_ partitions: [TopicPartition]) -> KafkaRevokeCompletion {
        handlers.withLock { $0 }?.revoked(partitions) ?? .now
    }

    /// Partitions were lost without a clean revoke.
    package func lost(_ partitions: [TopicPartition]) {
        handlers.withLock { $0 }?.lost(partitions)
    }

    package func partitionsAssigned(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        assigned(partitions)
    }

    package func partitionsRevoked(_ partitions: [TopicPartition], by consumer: KafkaConsumer) -> KafkaRevokeCompletion {
        revoked(partitions)
    }

    package func partitionsLost(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        lost(partitions)
    }
}
