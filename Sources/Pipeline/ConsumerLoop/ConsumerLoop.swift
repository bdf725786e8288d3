import Kafka
import Observability
import Synchronization

/// What both consumer loops (`RequestConsumer`, `ReconcileRunner`) are made of: a group consumer
/// whose rebalance callbacks reach the owner through a `RebalanceRelay`, the poll thread, the
/// `OffsetLedger` that says what may be committed (with commit metadata), the `CommitRoutine`, and
/// the stop request. The owner supplies what differs: the body of a poll turn and what a rebalance
/// does to its own state.
///
/// The loop is `running` until a stop is requested, then `stopping` until its work drains or the
/// drain deadline passes; each poll turn starts with `nextTurn`, a pure decision (time and the
/// work still outstanding passed in), which the owner carries out.
///
/// A revoke never blocks the poll thread: the owner defers it (`RevokeDrain`), keeps polling the
/// partitions it keeps, and `finishRevoke` commits, releases and gives the partitions up once
/// their work settled or the drain bound passed.
///
/// Threads: each poll turn runs on the loop's thread (`Executor.startLoop`), and so do the
/// rebalance callbacks (inside `poll`), `commitIfDue`, `commitNow`, `finishRevoke` and `finish`;
/// `requestStop`, `nextTurn` and `waitUntilFinished` may be called from any thread. An
/// asynchronous commit is recorded in the ledger when the coordinator accepts it (the consumer's
/// commit callback, inside `poll`); one it refuses (during a rebalance) is sent again on a later turn.
final class ConsumerLoop: Sendable {
    /// The group consumer (poll thread only, but for the thread-safe reads librdkafka allows).
    let consumer: any GroupConsumer
    /// The received, settled and committable offsets of the partitions this loop owns.
    let ledger: OffsetLedger
    private let relay = RebalanceRelay()
    private let handle = Mutex<(any LoopHandle)?>(nil)
    private let executor: any Executor
    private let commits: CommitRoutine
    private let logger: Logger
    private let phase = Mutex(Phase.running)

    /// Where the loop is in its life.
    enum Phase: Sendable, Equatable {
        /// Taking work.
        case running
        /// A stop was requested: no new work, what is held drains until `deadlineMs`.
        case stopping(deadlineMs: Int64)
    }

    /// What a poll turn does.
    enum Turn: Sendable, Equatable {
        /// Poll and take records.
        case poll
        /// Stopping: take no new work, poll only to serve callbacks and let held work settle.
        case drain
        /// Leave the poll loop now and `finish`; `unfinished` is what the drain bound left (redelivered).
        case finish(unfinished: Int)
    }

    /// The turn for `phase` at `nowMs` with `outstanding` pieces of work not yet settled.
    static func turn(_ phase: Phase, nowMs: Int64, outstanding: Int) -> Turn {
        switch phase {
        case .running: .poll
        case .stopping(let deadlineMs): outstanding == 0 || nowMs >= deadlineMs ? .finish(unfinished: outstanding) : .drain
        }
    }

    /// A loop over a consumer `runtime` makes from `properties` (the role's settings applied
    /// already), committing from `ledger` at most every `commitIntervalMs`, a forced (synchronous)
    /// commit waiting at most `forcedCommitTimeoutMs` (`commitTimeouts` counts those that got no
    /// answer in time); the consumer's statistics reports go to `statistics`.
    init(runtime: WorkerRuntime, properties: [String: String], recordLimits: KafkaRecordLimits? = nil, ledger: OffsetLedger,
         commitIntervalMs: Int64, forcedCommitTimeoutMs: Int64, commitTimeouts: Counter, logger: Logger,
         statistics: KafkaStatistics.Handler?) throws(KafkaError) {
        self.ledger = ledger
        self.logger = logger
        executor = runtime.executor
        let commits = CommitRoutine(intervalMs: commitIntervalMs, forcedTimeoutMs: forcedCommitTimeoutMs) { commitTimeouts.increment() }
        self.commits = commits
        consumer = try runtime.makeGroupConsumer(properties, recordLimits, relay, { outcome in
            commits.answered()
            switch outcome {
            case .success(let offsets): ledger.committed(offsets)
            case .failure(let error): logger.debug("asynchronous commit refused; it will be retried", [("error", .string(error.description))])
            }
        }, statistics)
    }

    /// Sets what the owner does on each rebalance callback (before `start`).
    func attach(_ handlers: RebalanceRelay.Handlers) {
        relay.attach(handlers)
    }

    /// Subscribes to `topic` and runs `turn` again and again on the loop's thread named
    /// `threadName` until it returns false (after calling `finish`).
    func start(topic: String, threadName: String, turn: @escaping @Sendable () -> Bool) throws(KafkaError) {
        try consumer.subscribe([topic])
        let started = executor.startLoop(name: threadName, turn: turn)
        handle.withLock { $0 = started }
    }

    /// Asks the loop to stop, its drain bounded by `drainMs` from `nowMs` (the first request counts);
    /// the forced commits after it wait no longer than the commit bound past the drain's end.
    func requestStop(drainMs: Int64, nowMs: Int64) {
        phase.withLock { phase in
            guard phase == .running else { return }
            phase = .stopping(deadlineMs: nowMs + drainMs)
        }
    }

    private let closing = Mutex(false)

    /// Whether a stop was requested.
    var isStopping: Bool { phase.withLock { $0 != .running } }

    /// The end of the stop's drain, nil while running: the stop's forced commits wait at most
    /// what is left of the commit bound past it (`CommitRoutine.forcedBound`).
    private var stopDeadlineMs: Int64? {
        guard case .stopping(let deadlineMs) = phase.withLock({ $0 }) else { return nil }
        return deadlineMs
    }

    /// This poll turn's decision, from the phase, `nowMs` and the work `outstanding` (unsettled;
    /// counted only while stopping, so a running loop's turn costs one lock).
    func nextTurn(nowMs: Int64, outstanding: () -> Int) -> Turn {
        let phase = phase.withLock { $0 }
        return Self.turn(phase, nowMs: nowMs, outstanding: phase == .running ? 0 : outstanding())
    }

    /// Blocks until the poll thread has finished (committed and left the group).
    func waitUntilFinished() {
        handle.withLock { $0 }?.waitUntilFinished()
    }

    /// The commit step of a poll turn: when due (or `force`), commits what the ledger says may be
    /// committed. Outside a revoke callback the ledger holds exactly the assigned partitions (a
    /// revoke releases them before it returns), so every partition it holds is committed.
    func commitIfDue(force: Bool, nowMs: Int64) {
        commits.run(force: force, nowMs: nowMs, stopDeadlineMs: stopDeadlineMs, consumer: consumer, logger: logger,
                    candidates: { ledger.commitCandidates() }, record: { ledger.committed($0) })
    }

    /// Commits `partitions` synchronously now (a revoke, after its drain), waiting for the
    /// coordinator within the forced commit's bound; false when the commit failed or timed out
    /// (the next owner redoes what is uncommitted).
    @discardableResult
    func commitNow(_ partitions: [TopicPartition], nowMs: Int64) -> Bool {
        let candidates = ledger.commitCandidates(partitions)
        guard !candidates.isEmpty else { return true }
        guard commits.commitForced(candidates, nowMs: nowMs, stopDeadlineMs: stopDeadlineMs, consumer: consumer, logger: logger,
                                   failure: "commit on revoke failed; the next owner will redo what is uncommitted") else { return false }
        ledger.committed(candidates)
        return true
    }

    /// Ends a deferred revoke: commits `partitions` synchronously, lets the owner `release` them,
    /// then gives them up (the consumer's unassign call: the group's rebalance goes on). False
    /// when the commit failed (the next owner redoes what is uncommitted).
    @discardableResult
    func finishRevoke(_ partitions: [TopicPartition], nowMs: Int64, release: ([TopicPartition]) -> Void) -> Bool {
        let committed = commitNow(partitions, nowMs: nowMs)
        release(partitions)
        consumer.completeRevoke()
        return committed
    }

    /// The end of the poll thread's body: a last synchronous commit (within what is left of the
    /// stop's commit bound), the consumer closed (leaving the group), the owner's handlers detached.
    func finish(nowMs: Int64) {
        commitIfDue(force: true, nowMs: nowMs)
        closing.withLock { $0 = true }
        consumer.close()
        relay.detach()
    }

    /// Whether the consumer is being closed: the revoke `close` makes runs after the stop's own
    /// drain, so it drains nothing more.
    var isClosing: Bool { closing.withLock { $0 } }
}
