import Foundation
import Kafka
import Observability
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

/// The commit step both consumer loops run after each poll turn: at most every `intervalMs` (or
/// at once when forced, on a revoke or at the end), commit what the loop says may be committed.
/// An asynchronous commit is recorded when the coordinator accepts it (the consumer's commit
/// callback); a forced one is synchronous and recorded at once. Poll thread only.
final class CommitRoutine: Sendable {
    private let intervalMs: Int64
    private let lastCommitMs = Mutex<Int64>(0)

    /// A routine committing at most every `intervalMs`.
    init(intervalMs: Int64) {
        self.intervalMs = intervalMs
    }

    /// Commits `candidates()` on `consumer` when due (or `force`); `record` gets what a
    /// synchronous commit covered. A failure is logged and the next turn tries again.
    func run(force: Bool, nowMs: Int64, consumer: KafkaConsumer, logger: Logger,
             candidates: () -> [TopicPartitionOffset], record: ([TopicPartitionOffset]) -> Void) {
        let due = lastCommitMs.withLock { last -> Bool in
            guard force || nowMs - last >= intervalMs else { return false }
            last = nowMs
            return true
        }
        guard due else { return }
        let offsets = candidates()
        guard !offsets.isEmpty else { return }
        do {
            try consumer.commit(offsets, synchronously: force)
            if force { record(offsets) }
        } catch {
            logger.warning("commit failed; will retry", [("error", .string(error.description))])
        }
    }
}
