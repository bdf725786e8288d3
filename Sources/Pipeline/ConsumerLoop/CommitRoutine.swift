import Kafka
import Observability
import Synchronization

/// The commit step of a `ConsumerLoop`, run after each poll turn: at most every `intervalMs` (or
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
    func run(force: Bool, nowMs: Int64, consumer: any GroupConsumer, logger: Logger,
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
