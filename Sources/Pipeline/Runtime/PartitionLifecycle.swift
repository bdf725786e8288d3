import Kafka

/// The life of the requests partitions this worker holds, as one value: each partition's phase
/// for its current assignment (generation) and the worker-wide backpressure pause. Every event —
/// assigned, fenced, caught up, revoked, released, a record received, a poll turn — is a
/// mutating method that returns what the poll thread must do (pause, resume, rewind); nothing
/// here touches Kafka or a clock, so `PartitionLifecycleTests` drive it like `WorkScheduler`.
///
/// The rule it exists for: **no record of an assignment reaches intake before that assignment's
/// marker catch-up finished.** `admit` is the one gate: a record of a partition that is not
/// `running` in the record's own generation is refused, and the first refused offset of each
/// partition is rewound to (the partition paused), so the record comes back once the partition
/// runs. A catch-up that finishes for an earlier generation of a partition changes nothing.
/// **A rewind is kept until it took effect** (`PendingRewind`): once the partition runs, no
/// record past the offset rewound to is taken before that offset itself came back.
///
/// Threads: kept under `RequestConsumer`'s lock; events come from the poll thread (assign,
/// revoke, release, records, turns), the producer's thread (fenced) and the catch-up reader's
/// queue (caught up). The actions are carried out on the poll thread.
struct PartitionLifecycle: Sendable {
    /// Where one assignment of a partition stands.
    enum Phase: Sendable, Equatable {
        /// Assigned and paused; its fence is being written.
        case fencing
        /// Fenced at `epoch`; its markers are being read.
        case catchingUp(epoch: Int64)
        /// Caught up: its records go to intake (unless the worker is under backpressure).
        case running
        /// Revoked (or lost): no new record is taken; in-flight work drains until the release
        /// (a revoke's deadline is the lifecycle's `RevokeDrain`).
        case draining
    }

    /// One partition held by this worker.
    struct Holding: Sendable, Equatable {
        /// The ledger's generation of this assignment.
        var generation: UInt64
        var phase: Phase
        /// The rewind to the first offset refused by `admit` while not running, until it took effect.
        var rewind: PendingRewind?
        /// Whether the poll thread resumed it since it began running (false: paused in Kafka).
        var isFlowing = false
    }

    /// What the poll thread does after an event.
    enum Action: Sendable, Equatable {
        case pause([TopicPartition])
        case resume([TopicPartition])
        /// Seek the (paused) partition back to `offset`: a record refused before the partition ran.
        case rewind(TopicPartition, offset: Int64)
    }

    /// What `admit` says of a received record.
    enum Admission: Sendable, Equatable {
        /// Hand it to intake.
        case deliver
        /// Not now: the partition is not running in this generation (rewound when `action` is set).
        case refuse(Action?)
        /// Not now: the partition runs, but a record past the offset it was rewound to came first
        /// (the seek did not take effect); `action` rewinds it again.
        case rewindLost(Action)
        /// Not now: a record past the offset rewound to, fetched before this turn's repeated rewind.
        case awaitingRewind
    }

    private(set) var holdings: [TopicPartition: Holding] = [:]
    /// The revoke draining, if any: its partitions are given up together when they settle or its deadline passes.
    private(set) var drain = RevokeDrain()
    /// Every assigned partition is paused while too much work is unsettled.
    private(set) var isBackpressured = false
    /// Raised on every pause or resume (`FetchWatchdog.Sample.flowVersion`).
    private(set) var flowVersion: UInt64 = 0
    /// Poll turns begun (`turn`): a rewind is repeated at most once per turn (`PendingRewind`).
    private var turns: UInt64 = 0
    /// Records refused by the gate since the start (a metric and a log line).
    private(set) var refusedRecords = 0

    /// Partitions assigned now (any phase).
    var assigned: Set<TopicPartition> { Set(holdings.keys) }

    /// Partitions paused now (in Kafka, by this worker): under backpressure all of them, else
    /// those not running and those that began running but were not resumed yet.
    var paused: Set<TopicPartition> { Set(holdings.filter { !$0.value.isFlowing }.keys) }

    /// The phase of `partition`'s current assignment, nil when not held.
    func phase(of partition: TopicPartition) -> Phase? { holdings[partition]?.phase }

    /// A new assignment of `partition` (generation from the ledger): paused until fenced and caught up.
    mutating func assigned(_ partition: TopicPartition, generation: UInt64) -> Action {
        holdings[partition] = Holding(generation: generation, phase: .fencing)
        flowVersion += 1
        return .pause([partition])
    }

    /// The assignment's fence was acknowledged at `epoch`: true when its catch-up should start
    /// (the same assignment is still fencing).
    mutating func fenced(_ partition: TopicPartition, generation: UInt64, epoch: Int64) -> Bool {
        guard var holding = holdings[partition], holding.generation == generation, holding.phase == .fencing else { return false }
        holding.phase = .catchingUp(epoch: epoch)
        holdings[partition] = holding
        return true
    }

    /// The assignment's catch-up finished: it runs from the next turn on. False (and nothing
    /// changes) for a catch-up of an earlier assignment of the partition, or one no longer held.
    mutating func caughtUp(_ partition: TopicPartition, generation: UInt64) -> Bool {
        guard var holding = holdings[partition], holding.generation == generation,
              case .catchingUp = holding.phase else { return false }
        holding.phase = .running
        holdings[partition] = holding
        return true
    }

    /// The partitions were revoked: no record of theirs is taken any more, they are paused, and
    /// they drain until `finishRevoke` says to give them up (by `deadlineMs` at the latest).
    mutating func revoked(_ partitions: [TopicPartition], deadlineMs: Int64) -> Action {
        let held = partitions.filter { holdings[$0] != nil }
        for partition in held {
            holdings[partition]?.phase = .draining
            holdings[partition]?.isFlowing = false
        }
        drain.begin(partitions, deadlineMs: deadlineMs)
        flowVersion += 1
        return .pause(held)
    }

    /// The partitions were lost (another member may hold them already): no record of theirs is
    /// taken, nothing waits for their drain; the caller releases them at once.
    mutating func lost(_ partitions: [TopicPartition]) {
        for partition in partitions where holdings[partition] != nil { holdings[partition]?.phase = .draining }
        drain.forget(partitions)
    }

    /// The draining revoke's partitions, when they are to be given up now: none of them holds
    /// unsettled work (`unsettled`), or the drain's deadline passed; nil meanwhile (or when none drains).
    mutating func finishRevoke(nowMs: Int64, unsettled: ([TopicPartition]) -> Int) -> [TopicPartition]? {
        drain.due(nowMs: nowMs, unsettled: unsettled)
    }

    /// The draining revoke's partitions, now, whatever they hold (the loop ends).
    mutating func takeRevoke() -> [TopicPartition] {
        drain.takeAll()
    }

    /// The partitions are no longer held (after a revoke's drain, or lost).
    mutating func released(_ partitions: [TopicPartition]) {
        for partition in partitions { holdings[partition] = nil }
    }

    /// The gate: may a record of `partition` at `offset` reach intake? Only once the partition's
    /// current assignment runs (caught up); otherwise refused, and the first refused offset of
    /// the assignment (or an earlier one) rewinds the partition to it, paused, so the record is
    /// fetched again once the assignment runs. A draining partition's records are dropped: its
    /// next owner reads them from the committed offset. A running partition whose rewind did not
    /// take effect (a record past it came first) is rewound again (`rewindLost`; the rest of the
    /// turn's records past it are `awaitingRewind`), as `PendingRewind` says. `checkRewind` false:
    /// that check is left out (a mutation).
    mutating func admit(_ partition: TopicPartition, offset: Int64, checkRewind: Bool = true) -> Admission {
        guard var holding = holdings[partition] else { return .refuse(nil) }
        if holding.phase == .running {
            guard checkRewind, let verdict = holding.rewind?.record(at: offset, turn: turns) else { return .deliver }
            if verdict == .tookEffect { holding.rewind = nil }
            if case .rewindAgain = verdict {
                holding.isFlowing = false
                flowVersion += 1
            }
            holdings[partition] = holding
            switch verdict {
            case .tookEffect: return .deliver
            case .awaitingRewind: return .awaitingRewind
            case .rewindAgain(let rewound): return .rewindLost(.rewind(partition, offset: rewound))
            }
        }
        refusedRecords += 1
        guard holding.phase != .draining else { return .refuse(nil) }
        if let rewound = holding.rewind?.offset, rewound <= offset { return .refuse(nil) }
        holding.rewind = PendingRewind(to: offset)
        holding.isFlowing = false
        holdings[partition] = holding
        flowVersion += 1
        return .refuse(.rewind(partition, offset: offset))
    }

    /// One poll turn's flow control: pause every partition at `pending >= limit`, resume below
    /// half; otherwise resume the partitions that began running since the last turn.
    mutating func turn(pending: Int, limit: Int) -> Action? {
        turns += 1
        if !isBackpressured && pending >= limit {
            isBackpressured = true
            flowVersion += 1
            for partition in holdings.keys { holdings[partition]?.isFlowing = false }
            return .pause(Array(assigned))
        }
        if isBackpressured && pending <= limit / 2 { isBackpressured = false }
        guard !isBackpressured else { return nil }
        let starting = holdings.filter { $0.value.phase == .running && !$0.value.isFlowing }.map(\.key)
        guard !starting.isEmpty else { return nil }
        for partition in starting { holdings[partition]?.isFlowing = true }
        flowVersion += 1
        return .resume(starting)
    }

    /// Pause everything (shutdown's drain): no record is taken any more.
    mutating func pauseAll() -> Action {
        isBackpressured = true
        for partition in holdings.keys { holdings[partition]?.isFlowing = false }
        flowVersion += 1
        return .pause(Array(assigned))
    }
}
