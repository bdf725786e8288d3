import Foundation
import Kafka
import Synchronization

/// Hands a group consumer's rebalance callbacks to the loop that owns it, without the consumer
/// holding the loop for good (the loop detaches when it ends). Both consumer loops
/// (`RequestConsumer`, `ReconcileRunner`) use it. Callbacks run on the loop's poll thread, inside
/// `poll` (see `KafkaRebalanceListener`).
final class RebalanceRelay: KafkaRebalanceListener {
    /// What the loop does on each callback.
    struct Handlers: Sendable {
        var assigned: @Sendable ([TopicPartition]) -> Void
        var revoked: @Sendable ([TopicPartition]) -> Void
        var lost: @Sendable ([TopicPartition]) -> Void
        /// An asynchronous commit the coordinator accepted (from the consumer's commit callback).
        var committed: @Sendable ([TopicPartitionOffset]) -> Void = { _ in }
    }

    private let handlers = Mutex<Handlers?>(nil)

    /// Sets (or, with nil, drops) the loop's handlers.
    func attach(_ handlers: Handlers?) { self.handlers.withLock { $0 = handlers } }

    func partitionsAssigned(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        handlers.withLock { $0 }?.assigned(partitions)
    }

    func partitionsRevoked(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        handlers.withLock { $0 }?.revoked(partitions)
    }

    func partitionsLost(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        handlers.withLock { $0 }?.lost(partitions)
    }

    /// Relays an accepted asynchronous commit.
    func committed(_ offsets: [TopicPartitionOffset]) {
        handlers.withLock { $0 }?.committed(offsets)
    }
}

/// The thread a consumer loop runs on, and the signal that it ended. `waitUntilFinished` may be
/// called by any number of threads, before or after the end.
final class PollThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)

    /// Runs `body` on a new thread named `name`.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [finished] in
            body()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Blocks until the body has returned.
    func waitUntilFinished() {
        finished.wait()
        finished.signal()
    }
}
