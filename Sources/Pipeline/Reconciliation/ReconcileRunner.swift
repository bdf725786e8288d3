import Contract
import Foundation
import Issuers
import Kafka
import Observability
import Recovery
import Synchronization

/// Runs reconciliation jobs from `provisioning.reconcile` when they are due.
///
/// Jobs are read as they arrive and held in a due-time heap (no busy-waiting: one timer for the
/// earliest). A partition is paused while it holds `reconcile.max_held_per_partition` jobs, so a
/// long tier cannot pull the topic into memory; a record that arrives for a partition already at
/// its limit (fetched in the same batch, or just after a new assignment) is not held: the partition
/// stays paused and is rewound to that record, which is fetched again once the partition has room.
/// No partition ever holds more than the limit. A due job asks the issuer for its state: a definitive
/// answer publishes the final, truthful result; an unusable one schedules the next tier; the last
/// tier publishes a final `check_wallet` result and dead-letters the job for operators.
/// Offsets are committed contiguously, like requests: the same `ConsumerLoop`, with its own
/// `OffsetLedger`. Its consumer group is `<group_id>.reconcile`.
/// On stop, running queries finish within the drain; held jobs stay uncommitted (another worker,
/// or this one after a restart, runs them).
///
/// Threads: only the poll thread pauses, resumes and rewinds the consumer (and runs the rebalance
/// callbacks); `runDue` (timer and answer threads) only marks partitions to resume, and the poll
/// thread resumes them on its next turn. librdkafka keeps a partition's pause across a revoke and
/// a new assignment of it, so a partition paused when it was revoked is resumed on assignment.
///
/// A job handed over from a previous owner of the request's partition (`handOver`), whatever its
/// issuer, first looks in the markers partition for that owner's decision or `completed` marker:
/// the owner may only have lost the partition and still answer. A decision found is published
/// again as it is (its writer may have died before publishing it); a `completed` marker without
/// one means that owner answered (nothing more is published). Otherwise the issuer is queried and
/// the reconciled final is itself decided through the markers log (`FinalDecider`): when the
/// previous owner's decision lands first after all, that one is published instead. An issuer
/// without a state query waits for the previous owner up to `handOverLooks` tiers before the
/// `check_wallet` final.
final class ReconcileRunner: Sendable {
    /// How many tiers a handed-over job without a state query waits for the previous owner's answer.
    static let handOverLooks = 3
    /// How many more times an exhausted job runs when its final cannot be checked against the markers.
    static let decisionRetries = 5
    let context: WorkerContext
    let loop: ConsumerLoop
    let state = Mutex(State())
    let timer: any WorkTimer
    let maxHeldPerPartition: Int
    /// Most reconciliation queries running at once.
    let maxRunning = 64

    /// Dead letters sealed with the replay key in use now.
    var deadLetters: DeadLetterBuilder {
        DeadLetterBuilder(deadLetterTopic: context.configuration.topics.deadLetters, parkedTopic: context.configuration.topics.parked,
                          worker: context.configuration.workerID, group: context.configuration.groupID + ".reconcile",
                          seal: context.secrets.current.deadLetterSeal(nowMs: context.clock()))
    }

    /// The group consumer (the loop's).
    var consumer: any GroupConsumer { loop.consumer }
    /// This group's offsets (the loop's ledger; not the requests group's).
    var ledger: OffsetLedger { loop.ledger }

    struct State {
        var held = PriorityHeap<Held> { ($0.job.dueAtMs, $0.offset) < ($1.job.dueAtMs, $1.offset) }
        var heldPerPartition: [TopicPartition: Int] = [:]
        /// Partitions at their hold limit (until below half).
        var paused: Set<TopicPartition> = []
        /// Partitions librdkafka was told to pause and not yet to resume: kept across a revoke,
        /// since librdkafka keeps the pause (changed on the poll thread only).
        var libraryPaused: Set<TopicPartition> = []
        /// Partitions `runDue` released from `paused`, for the poll thread to resume.
        var resumeWanted: Set<TopicPartition> = []
        /// Most jobs one partition held at once since the start.
        var heldPeak = 0
        var running = 0
        /// The revoke draining (its running queries end, then its partitions are committed and given up).
        var drain = RevokeDrain()
        /// Each rewound partition's rewind, until it took effect: no record past its offset is
        /// held first (the seek may not have taken effect).
        var rewinds: [TopicPartition: PendingRewind] = [:]
        /// Poll turns begun: a rewind is repeated at most once per turn.
        var turns: UInt64 = 0
    }

    init(context: WorkerContext, runtime: WorkerRuntime) throws(KafkaError) {
        self.context = context
        self.maxHeldPerPartition = max(1, context.configuration.reconcileMaxHeldPerPartition)
        let properties = KafkaConsumerRole.committingMember(groupID: context.configuration.groupID + ".reconcile", assignmentStrategy: KafkaRuntime.defaultAssignor)
            .applied(to: context.configuration.consumerProperties)
        loop = try ConsumerLoop(runtime: runtime, properties: KafkaStatisticsMetrics.withInterval(properties), ledger: OffsetLedger(),
                                commitIntervalMs: 200, forcedCommitTimeoutMs: context.configuration.forcedCommitTimeoutMs,
                                commitTimeouts: context.metrics.commitTimeouts, logger: context.logger.child("reconcile"),
                                statistics: context.metrics.kafkaStatistics.handler(for: .reconcile, topic: context.configuration.topics.reconcile))
        timer = context.executor.timer(label: "provisioner.reconcile-timer")
        // Weak: the loop (and its relay) must not keep its owner alive.
        loop.attach(.init(assigned: { [weak self] in self?.assigned($0) }, revoked: { [weak self] in self?.revoked($0) ?? .now },
                          lost: { [weak self] in self?.lost($0) }))
        timer.setHandler { [weak self] in self?.runDue() }
    }


    /// Jobs held waiting for their tier (metrics: the reconciliation backlog).
    var backlog: Int { state.withLock { $0.held.count + $0.running } }

    /// Most jobs one reconcile partition held at once since the start (metrics: never above the limit).
    var heldPeak: Int { state.withLock { $0.heldPeak } }

    // MARK: - Loop

    /// One poll turn (the loop's thread): due jobs started, released partitions resumed, one poll's
    /// jobs held (or their partitions rewound at the hold limit), a deferred revoke finished once
    /// its running queries ended, the commit when due. False once the loop has finished.
    func turn() -> Bool {
        let (running, firstDue) = state.withLock { ($0.running, $0.held.first?.job.dueAtMs) }
        // Held jobs stay uncommitted on a stop: only running queries are waited for.
        let turn = loop.nextTurn(nowMs: context.clock()) { running }
        if case .finish = turn {
            finishRevoke(all: true)
            timer.cancel()
            loop.finish(nowMs: context.clock())
            return false
        }
        let stopping = turn == .drain
        // The timer counts in monotonic time from when it was armed; a clock step forward
        // must not leave a due job waiting for it.
        if let firstDue, firstDue <= context.clock() { runDue() }
        resumeReleased()
        var rewind: [TopicPartition: Int64] = [:]
        state.withLock { $0.turns += 1 }
        for result in consumer.poll(maxMessages: 256, timeoutMs: stopping ? 10 : 50) {
            guard case .success(let message) = result else {
                if case .failure(let error) = result { _ = context.consumerFault.report(error, nowMs: context.clock()) }
                continue
            }
            if let offset = hold(message) {
                let partition = TopicPartition(topic: message.topic, partition: message.partition)
                rewind[partition] = min(rewind[partition] ?? .max, offset)
            }
        }
        if !rewind.isEmpty { rewindRefused(rewind) }
        finishRevoke(all: false)
        loop.commitIfDue(force: false, nowMs: context.clock())
        return true
    }

    /// Holds a fetched job; when it is not held, the offset its partition must be rewound to: its
    /// own when the partition is at the hold limit, or the offset of an earlier rewind that did
    /// not take effect (a record past it came first). A record fetched again, or of a partition
    /// no longer assigned, is dropped (nil).
    func hold(_ message: KafkaMessage) -> Int64? {
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        if !context.mutations.rewindUnchecked {
            let verdict = state.withLock { state -> PendingRewind.Verdict in
                guard let verdict = state.rewinds[partition]?.record(at: message.offset, turn: state.turns) else { return .tookEffect }
                if verdict == .tookEffect { state.rewinds[partition] = nil }
                return verdict
            }
            switch verdict {
            case .tookEffect:
                break
            case .awaitingRewind(let offset):
                return offset
            case .rewindAgain(let offset):
                context.logger.warning("a reconciliation job arrived past the offset its partition was rewound to (the seek did not take effect): rewound again",
                                       [("partition", .integer(Int64(partition.partition))), ("offset", .integer(message.offset))])
                context.metrics.rewindsRepeated.increment()
                return offset
            }
        }
        let read = ReconcileJob.read(message.value)
        var problem: String?
        switch read {
        case .failure(let failure): problem = "the record is not a reconciliation job: \(failure.reason)"
        case .success:
            if let replayOf = message.header(DeadLetterHeader.replayOf), ReplayReference(bytes: replayOf) == nil {
                problem = "the record's x-replay-of header is not topic:partition:offset within \(ReplayReference.maximumBytes) bytes"
            }
        }
        // A record fetched again (the consumer rewound after a pause/resume) is already held or
        // done, and one of a partition no longer owned is not this worker's. Only this (poll)
        // thread tracks offsets, so the record is still acceptable when tracked below.
        guard ledger.accepts(partition, offset: message.offset) else { return nil }
        guard problem == nil, case .success(let job) = read else {
            if let generation = ledger.track(partition, offset: message.offset) {
                deadLetterRecord(message, generation: generation, reason: problem ?? "")
            }
            return nil
        }
        enum Taken { case dropped, refused(pause: Bool), held(pause: Bool) }
        let taken = state.withLock { state -> Taken in
            if state.heldPerPartition[partition, default: 0] >= maxHeldPerPartition {
                state.paused.insert(partition)
                return .refused(pause: state.libraryPaused.insert(partition).inserted)
            }
            // Tracked before it is held: once held, a timer thread may run and complete it.
            guard let generation = ledger.track(partition, offset: message.offset) else { return .dropped }
            state.held.insert(Held(job: job, partition: partition, offset: message.offset, generation: generation,
                                   headers: message.headers))
            let count = state.heldPerPartition[partition, default: 0] + 1
            state.heldPerPartition[partition] = count
            state.heldPeak = max(state.heldPeak, count)
            guard count >= maxHeldPerPartition else { return .held(pause: false) }
            state.paused.insert(partition)
            return .held(pause: state.libraryPaused.insert(partition).inserted)
        }
        switch taken {
        case .dropped:
            return nil
        case .refused(let pause):
            if pause { pausePartition(partition) }
            return message.offset
        case .held(let pause):
            if pause { pausePartition(partition) }
            armTimer()
            return nil
        }
    }

    func pausePartition(_ partition: TopicPartition) {
        consumer.pause([partition])
        context.metrics.setPartitionPaused(partition, true)
        context.logger.info("reconciliation partition paused: hold limit reached",
                            [("partition", .integer(Int64(partition.partition))), ("limit", .integer(Int64(maxHeldPerPartition)))])
    }

    /// Records of partitions at their limit were returned by this poll and not held: librdkafka
    /// would go on after them on resume (a pause keeps the position after the last record
    /// returned), so each partition, paused already, is rewound to its first one not held.
    func rewindRefused(_ rewind: [TopicPartition: Int64]) {
        state.withLock { state in
            for (partition, offset) in rewind { state.rewinds[partition, default: PendingRewind(to: offset)].lower(to: offset) }
        }
        for (partition, offset) in rewind {
            do {
                try consumer.seek(partition, to: offset, timeoutMs: 5_000)
                context.logger.info("reconciliation partition rewound: records past the hold limit are fetched again later",
                                    [("partition", .integer(Int64(partition.partition))), ("offset", .integer(offset))])
            } catch {
                // Still paused and uncommitted from `offset`; `hold` takes nothing past it, and
                // rewinds again, until it came back.
                context.logger.error("reconciliation partition could not be rewound to records past the hold limit",
                                     [("partition", .integer(Int64(partition.partition))), ("offset", .integer(offset)),
                                      ("error", .string(error.description))])
            }
        }
    }

    /// Resumes (on the poll thread) the partitions `runDue` released, unless held full again or gone.
    func resumeReleased() {
        let resume = state.withLock { state -> [TopicPartition] in
            let resume = state.resumeWanted.filter {
                !state.paused.contains($0) && state.libraryPaused.contains($0) && ledger.holds($0)
            }
            state.resumeWanted.removeAll()
            state.libraryPaused.subtract(resume)
            return Array(resume)
        }
        guard !resume.isEmpty else { return }
        consumer.resume(resume)
        for partition in resume { context.metrics.setPartitionPaused(partition, false) }
        context.logger.info("reconciliation partitions resumed: below half the hold limit", [("partitions", .string(Self.names(resume)))])
    }

    static func names(_ partitions: [TopicPartition]) -> String {
        partitions.map { String($0.partition) }.sorted().joined(separator: ",")
    }

    func armTimer() {
        // At the running limit the next `done` runs what is due; a timer in the past would spin.
        let next = state.withLock { $0.running < maxRunning ? $0.held.first?.job.dueAtMs : nil }
        timer.schedule(atMs: next, nowMs: context.clock())
    }

    /// Starts every due job (up to `maxRunning` at once).
    func runDue() {
        let now = context.clock()
        let due = state.withLock { state -> [Held] in
            var due: [Held] = []
            while state.running < maxRunning, let first = state.held.first, first.job.dueAtMs <= now {
                state.held.popFirst()
                state.heldPerPartition[first.partition, default: 1] -= 1
                state.running += 1
                due.append(first)
            }
            let below = state.paused.filter { state.heldPerPartition[$0, default: 0] < maxHeldPerPartition / 2 }
            state.paused.subtract(below)
            state.resumeWanted.formUnion(below)
            return due
        }
        for held in due { reconcile(held) }
        armTimer()
    }
}
