import Kafka
import Observability
import Synchronization

/// The commit step of a `ConsumerLoop`, run after each poll turn: at most every `intervalMs` (or
/// at once when forced, on a revoke or at the end), commit what the loop says may be committed.
/// An asynchronous commit is recorded when the coordinator accepts it (the consumer's commit
/// callback, which also calls `answered`); one at a time is in flight: the next waits for that
/// answer, or for `resendAfterMs` when none comes (a coordinator that stopped answering would
/// otherwise get a new commit every interval, hundreds in flight).
/// A forced one is synchronous and recorded at once. Poll thread only, but for `answered`.
final class CommitRoutine: Sendable {
    private let intervalMs: Int64
    private let resendAfterMs: Int64
    private let state = Mutex<(lastCommitMs: Int64, inFlightSinceMs: Int64?)>((0, nil))

    /// A routine committing at most every `intervalMs`, with one asynchronous commit in flight
    /// (sent again after `resendAfterMs` without an answer).
    init(intervalMs: Int64, resendAfterMs: Int64 = 5_000) {
        self.intervalMs = intervalMs
        self.resendAfterMs = resendAfterMs
    }

    /// Whether a commit is due: forced, or `intervalMs` after the last one and no asynchronous
    /// commit awaiting its answer (for less than `resendAfterMs`).
    static func isDue(force: Bool, nowMs: Int64, lastCommitMs: Int64, inFlightSinceMs: Int64?, intervalMs: Int64, resendAfterMs: Int64) -> Bool {
        if force { return true }
        if let sent = inFlightSinceMs, nowMs - sent < resendAfterMs { return false }
        return nowMs - lastCommitMs >= intervalMs
    }

    /// The coordinator answered the asynchronous commit (accepted or refused): the next may go.
    func answered() {
        state.withLock { $0.inFlightSinceMs = nil }
    }

    /// Commits `candidates()` on `consumer` when due (or `force`); `record` gets what a
    /// synchronous commit covered. A failure is logged and the next turn tries again.
    func run(force: Bool, nowMs: Int64, consumer: any GroupConsumer, logger: Logger,
             candidates: () -> [TopicPartitionOffset], record: ([TopicPartitionOffset]) -> Void) {
        let due = state.withLock { state -> Bool in
            guard Self.isDue(force: force, nowMs: nowMs, lastCommitMs: state.lastCommitMs, inFlightSinceMs: state.inFlightSinceMs,
                             intervalMs: intervalMs, resendAfterMs: resendAfterMs) else { return false }
            state.lastCommitMs = nowMs
            return true
        }
        guard due else { return }
        let offsets = candidates()
        guard !offsets.isEmpty else { return }
        do {
            try consumer.commit(offsets, synchronously: force)
            if force { record(offsets) } else { state.withLock { $0.inFlightSinceMs = nowMs } }
        } catch {
            logger.warning("commit failed; will retry", [("error", .string(error.description))])
        }
    }
}
