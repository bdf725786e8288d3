import Kafka
import Observability
import Synchronization

/// The commit step of a `ConsumerLoop`, run after each poll turn: at most every `intervalMs` (or
/// at once when forced, on a revoke or at the end), commit what the loop says may be committed.
/// An asynchronous commit is recorded when the coordinator accepts it (the consumer's commit
/// callback, which also calls `answered`); one at a time is in flight: the next waits for that
/// answer, or for `resendAfterMs` when none comes (a coordinator that stopped answering would
/// otherwise get a new commit every interval, hundreds in flight).
/// A forced one is synchronous, recorded at once, and waits for the coordinator at most
/// `forcedTimeoutMs` (`forcedBound`): the poll thread runs it, and a coordinator that stopped
/// answering must not stop the polls, the rebalance callbacks or a shutdown. Poll thread only,
/// but for `answered`.
final class CommitRoutine: Sendable {
    private let intervalMs: Int64
    private let resendAfterMs: Int64
    private let forcedTimeoutMs: Int64
    private let timedOut: @Sendable () -> Void
    private let state = Mutex<(lastCommitMs: Int64, inFlightSinceMs: Int64?)>((0, nil))

    /// A routine committing at most every `intervalMs`, with one asynchronous commit in flight
    /// (sent again after `resendAfterMs` without an answer), a forced commit waiting at most
    /// `forcedTimeoutMs` (`WorkerConfiguration.forcedCommitTimeoutMs`); `timedOut` runs each time
    /// a forced one got no answer in time.
    init(intervalMs: Int64, resendAfterMs: Int64 = 5_000, forcedTimeoutMs: Int64,
         timedOut: @escaping @Sendable () -> Void = {}) {
        self.intervalMs = intervalMs
        self.resendAfterMs = resendAfterMs
        self.forcedTimeoutMs = forcedTimeoutMs
        self.timedOut = timedOut
    }

    /// Whether a commit is due: forced, or `intervalMs` after the last one and no asynchronous
    /// commit awaiting its answer (for less than `resendAfterMs`).
    static func isDue(force: Bool, nowMs: Int64, lastCommitMs: Int64, inFlightSinceMs: Int64?, intervalMs: Int64, resendAfterMs: Int64) -> Bool {
        if force { return true }
        if let sent = inFlightSinceMs, nowMs - sent < resendAfterMs { return false }
        return nowMs - lastCommitMs >= intervalMs
    }

    /// How long a forced commit at `nowMs` may wait for the coordinator: `timeoutMs`; once the
    /// loop is stopping (`stopDeadlineMs`, the end of its drain), no more than is left of the
    /// stop's budget, which ends `timeoutMs` after the drain deadline, so however many forced
    /// commits a stop makes (revoke, final, close), together they never outlast it. Never
    /// negative: a budget spent leaves 0 (the commit is sent, not waited for).
    static func forcedBound(timeoutMs: Int64, nowMs: Int64, stopDeadlineMs: Int64?) -> Int64 {
        guard let stopDeadlineMs else { return max(0, timeoutMs) }
        return max(0, min(timeoutMs, stopDeadlineMs + timeoutMs - nowMs))
    }

    /// The coordinator answered the asynchronous commit (accepted or refused): the next may go.
    func answered() {
        state.withLock { $0.inFlightSinceMs = nil }
    }

    /// Commits `candidates()` on `consumer` when due (or `force`: synchronously, within
    /// `forcedBound`); `record` gets what a synchronous commit covered. A failure is logged and
    /// the next turn tries again.
    func run(force: Bool, nowMs: Int64, stopDeadlineMs: Int64?, consumer: any GroupConsumer, logger: Logger,
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
        if force {
            if commitForced(offsets, nowMs: nowMs, stopDeadlineMs: stopDeadlineMs, consumer: consumer, logger: logger,
                            failure: "commit failed; will retry") {
                record(offsets)
            }
            return
        }
        do {
            try consumer.commitAsynchronously(offsets)
            state.withLock { $0.inFlightSinceMs = nowMs }
        } catch {
            logger.warning("commit failed; will retry", [("error", .string(error.description))])
        }
    }

    /// Commits `offsets` synchronously, waiting at most `forcedBound`; true when the coordinator
    /// accepted them. A failure is logged as `failure`; a timeout is logged and counted.
    ///
    /// What a failed or timed-out commit leaves uncommitted is redelivered to the partition's next
    /// owner (or to this member), and that is safe: the call markers make a redelivered request
    /// answered once (its issuer call is not made twice). A timed-out commit may still land later;
    /// it carries offsets this member settled, so it never covers work left undone.
    func commitForced(_ offsets: [TopicPartitionOffset], nowMs: Int64, stopDeadlineMs: Int64?, consumer: any GroupConsumer,
                      logger: Logger, failure: String) -> Bool {
        let boundMs = Self.forcedBound(timeoutMs: forcedTimeoutMs, nowMs: nowMs, stopDeadlineMs: stopDeadlineMs)
        do {
            try consumer.commit(offsets, timeoutMs: Int32(clamping: boundMs))
            return true
        } catch where error.code == .timedOut {
            timedOut()
            logger.warning("commit timed out: the group coordinator did not answer in time; the next owner redoes what is uncommitted",
                           [("bound_ms", .integer(boundMs)), ("partitions", .integer(Int64(offsets.count))),
                            ("error", .string(error.description))])
        } catch {
            logger.warning(failure, [("error", .string(error.description))])
        }
        return false
    }
}
