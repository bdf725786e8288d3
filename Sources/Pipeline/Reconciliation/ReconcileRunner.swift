import Contract
import Dispatch
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
/// Offsets are committed contiguously, like requests. Its consumer group is `<group_id>.reconcile`.
///
/// Threads: only the poll thread pauses, resumes and rewinds the consumer (and runs the rebalance
/// callbacks); `runDue` (timer and answer threads) only marks partitions to resume, and the poll
/// thread resumes them on its next turn. librdkafka keeps a partition's pause across a revoke and
/// a new assignment of it, so a partition paused when it was revoked is resumed on assignment.
///
/// A job handed over from a previous owner of the request's partition (`handOver`) whose issuer
/// has no state query first looks for that owner's `completed` marker: the owner may only have
/// lost the partition and still publish its answer. Found: nothing more is published (that answer
/// is the final one). Not found: looked for again at the next tiers, up to `handOverLooks` times,
/// before the `check_wallet` final.
final class ReconcileRunner: Sendable {
    /// How many tiers a handed-over job without a state query waits for the previous owner's answer.
    static let handOverLooks = 3
    private let context: WorkerContext
    private let consumer: KafkaConsumer
    private let relay: RebalanceRelay
    private let state = Mutex(State())
    private let timer = DispatchTimer(label: "provisioner.reconcile-timer")
    private let thread = PollThread()
    private let maxHeldPerPartition: Int
    private let maxRunning: Int
    private let deadLetters: DeadLetterBuilder
    /// Woken whenever a running query ends, for a revoke's drain.
    private let queryEnded = DrainWait()
    /// Reads markers for handed-over jobs; created on first use (most workers never need it).
    private let markerReader = Mutex<MarkerCatchUp?>(nil)

    private struct Held: Sendable {
        let job: ReconcileJob
        let partition: TopicPartition
        let offset: Int64
        let generation: UInt64
        let headers: [KafkaHeader]
    }

    private struct State {
        var stopRequested = false
        var drainDeadlineMs: Int64 = 0
        var held = PriorityHeap<Held> { ($0.job.dueAtMs, $0.offset) < ($1.job.dueAtMs, $1.offset) }
        var heldPerPartition: [TopicPartition: Int] = [:]
        var trackers: [TopicPartition: (tracker: PartitionOffsetTracker, generation: UInt64, lastCommitted: Int64?)] = [:]
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
        var nextGeneration: UInt64 = 1
        var lastCommitMs: Int64 = 0
    }

    init(context: WorkerContext, maxRunning: Int = 64) throws(KafkaError) {
        self.context = context
        self.maxHeldPerPartition = max(1, context.configuration.reconcileMaxHeldPerPartition)
        self.maxRunning = maxRunning
        deadLetters = DeadLetterBuilder(deadLetterTopic: context.configuration.topics.deadLetters, parkedTopic: context.configuration.topics.parked,
                                        worker: context.configuration.workerID, group: context.configuration.groupID + ".reconcile")
        let properties = KafkaConsumerRole.committingMember(groupID: context.configuration.groupID + ".reconcile")
            .applied(to: context.configuration.consumerProperties)
        let relay = RebalanceRelay()
        self.relay = relay
        // An asynchronous commit counts only once the coordinator accepted it; a refused one is
        // sent again on the next cycle.
        consumer = try KafkaConsumer(configuration: properties, rebalanceListener: relay) { outcome in
            if case .success(let offsets) = outcome { relay.committed(offsets) }
        }
        relay.attach(.init(assigned: { [self] in assigned($0) }, revoked: { [self] in revoked($0, commit: true) },
                           lost: { [self] in revoked($0, commit: false) }, committed: { [self] in recordCommitted($0) }))
        timer.setHandler { [weak self] in self?.runDue() }
    }

    /// Subscribes and starts the poll thread.
    func start() throws(KafkaError) {
        try consumer.subscribe([context.configuration.topics.reconcile])
        thread.start(name: "provisioner-reconcile") { [self] in run() }
    }

    /// Stops taking jobs; running queries finish within `drainMs`; held jobs stay uncommitted
    /// (another worker, or this one after a restart, runs them).
    func requestStop(drainMs: Int64) {
        state.withLock { state in
            state.stopRequested = true
            state.drainDeadlineMs = context.clock() + drainMs
        }
    }

    /// Blocks until the loop has committed and left its group.
    func waitUntilFinished() {
        thread.waitUntilFinished()
    }

    /// Jobs held waiting for their tier (metrics: the reconciliation backlog).
    var backlog: Int { state.withLock { $0.held.count + $0.running } }

    /// Most jobs one reconcile partition held at once since the start (metrics: never above the limit).
    var heldPeak: Int { state.withLock { $0.heldPeak } }

    // MARK: - Loop

    private func run() {
        while true {
            let (stopping, deadline, running, firstDue) = state.withLock {
                ($0.stopRequested, $0.drainDeadlineMs, $0.running, $0.held.first?.job.dueAtMs)
            }
            if stopping && (running == 0 || context.clock() >= deadline) { break }
            // The timer counts in monotonic time from when it was armed; a clock step forward
            // must not leave a due job waiting for it.
            if let firstDue, firstDue <= context.clock() { runDue() }
            resumeReleased()
            var rewind: [TopicPartition: Int64] = [:]
            for result in consumer.poll(maxMessages: 256, timeoutMs: stopping ? 10 : 50) {
                guard case .success(let message) = result else { continue }
                if !hold(message) {
                    let partition = TopicPartition(topic: message.topic, partition: message.partition)
                    rewind[partition] = min(rewind[partition] ?? .max, message.offset)
                }
            }
            if !rewind.isEmpty { rewindRefused(rewind) }
            commitIfDue(force: false)
        }
        timer.cancel()
        commitIfDue(force: true)
        markerReader.withLock { $0 }?.close()
        consumer.close()
        relay.attach(nil)
    }

    /// Holds a fetched job; false when it was not held because its partition is at the hold limit
    /// (the caller rewinds the partition to it). A record fetched again, or of a partition no
    /// longer assigned, is dropped (true).
    private func hold(_ message: KafkaMessage) -> Bool {
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        let read = ReconcileJob.read(message.value)
        var problem: String?
        switch read {
        case .failure(let failure): problem = "the record is not a reconciliation job: \(failure.reason)"
        case .success:
            if let replayOf = message.header(DeadLetterHeader.replayOf), ReplayReference(bytes: replayOf) == nil {
                problem = "the record's x-replay-of header is not topic:partition:offset within \(ReplayReference.maximumBytes) bytes"
            }
        }
        enum Taken { case dropped, refused(pause: Bool), poison(UInt64), held(pause: Bool) }
        let taken = state.withLock { state -> Taken in
            // A record fetched again (the consumer rewound after a pause/resume) is already held or done.
            guard var entry = state.trackers[partition], entry.tracker.accepts(message.offset) else { return .dropped }
            guard problem == nil, case .success(let job) = read else {
                entry.tracker.track(message.offset)
                state.trackers[partition] = entry
                return .poison(entry.generation)
            }
            if state.heldPerPartition[partition, default: 0] >= maxHeldPerPartition {
                state.paused.insert(partition)
                return .refused(pause: state.libraryPaused.insert(partition).inserted)
            }
            entry.tracker.track(message.offset)
            state.trackers[partition] = entry
            state.held.insert(Held(job: job, partition: partition, offset: message.offset, generation: entry.generation,
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
            return true
        case .poison(let generation):
            deadLetterRecord(message, generation: generation, reason: problem ?? "")
            return true
        case .refused(let pause):
            if pause { pausePartition(partition) }
            return false
        case .held(let pause):
            if pause { pausePartition(partition) }
            armTimer()
            return true
        }
    }

    private func pausePartition(_ partition: TopicPartition) {
        consumer.pause([partition])
        context.metrics.setPartitionPaused(partition, true)
        context.logger.info("reconciliation partition paused: hold limit reached",
                            [("partition", .integer(Int64(partition.partition))), ("limit", .integer(Int64(maxHeldPerPartition)))])
    }

    /// Records of partitions at their limit were returned by this poll and not held: librdkafka
    /// would go on after them on resume (a pause keeps the position after the last record
    /// returned), so each partition, paused already, is rewound to its first one not held.
    private func rewindRefused(_ rewind: [TopicPartition: Int64]) {
        for (partition, offset) in rewind {
            do {
                try consumer.seek(partition, to: offset, timeoutMs: 5_000)
                context.logger.info("reconciliation partition rewound: records past the hold limit are fetched again later",
                                    [("partition", .integer(Int64(partition.partition))), ("offset", .integer(offset))])
            } catch {
                // Still paused and uncommitted from `offset`: its next owner (after a rebalance or a restart) reads them.
                context.logger.error("reconciliation partition could not be rewound to records past the hold limit",
                                     [("partition", .integer(Int64(partition.partition))), ("offset", .integer(offset)),
                                      ("error", .string(error.description))])
            }
        }
    }

    /// Resumes (on the poll thread) the partitions `runDue` released, unless held full again or gone.
    private func resumeReleased() {
        let resume = state.withLock { state -> [TopicPartition] in
            let resume = state.resumeWanted.filter {
                !state.paused.contains($0) && state.libraryPaused.contains($0) && state.trackers[$0] != nil
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

    private static func names(_ partitions: [TopicPartition]) -> String {
        partitions.map { String($0.partition) }.sorted().joined(separator: ",")
    }

    private func armTimer() {
        // At the running limit the next `done` runs what is due; a timer in the past would spin.
        let next = state.withLock { $0.running < maxRunning ? $0.held.first?.job.dueAtMs : nil }
        timer.schedule(atMs: next, nowMs: context.clock())
    }

    /// Starts every due job (up to `maxRunning` at once).
    private func runDue() {
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

    private func reconcile(_ held: Held) {
        let job = held.job
        guard let endpoint = context.endpoints[job.program] else {
            context.logger.error("reconciliation job for a program this worker does not know; dead-lettering it",
                                 [("program", .string(AuditEvent.safeIdentifier(job.program)))])
            exhausted(held, reason: "the program is not configured on this worker")
            return
        }
        let query = ReconcileQuery(requestID: job.requestID, kind: job.kind, wallet: job.wallet, cardID: job.cardID,
                                   deviceRef: job.deviceRef, windowStartMs: job.windowStartMs, transactionReference: job.transactionReference)
        context.issuerClient.reconcile(query, endpoint: endpoint, publishByMs: context.clock() + endpoint.timeoutMs) { [self] answer in
            DispatchQueue.global().async { self.answered(held, answer: answer) }
        }
    }

    private func answered(_ held: Held, answer: ReconcileAnswer) {
        let job = held.job
        switch answer {
        case .applied:
            context.metrics.countReconcile("applied")
            publishFinal(held, outcome: OutcomeTable.reconciledApplied())
        case .notApplied:
            context.metrics.countReconcile("not_applied")
            publishFinal(held, outcome: OutcomeTable.reconciledNotApplied(wallet: job.wallet, kind: job.kind))
        case .noStateAPI:
            if let handOver = job.handOver {
                awaitPreviousOwner(held, handOver: handOver)
                return
            }
            context.metrics.countReconcile("no_state_api")
            publishFinal(held, outcome: OutcomeTable.reconcileCheckWallet())
        case .payment(let payment):
            context.metrics.countReconcile("payment")
            guard let status = WorldpayAdapter.status(ofEvent: payment.outcome) else {
                retryLater(held, reason: "unrecognised payment event")
                return
            }
            publishFinal(held, outcome: OutcomeTable.reconciledPayment(status), payment: payment)
        case .unknown:
            context.metrics.countReconcile("unknown")
            retryLater(held, reason: "the state query gave no usable answer")
        }
    }

    /// A handed-over job whose issuer has no state query: did the previous owner answer after all?
    private func awaitPreviousOwner(_ held: Held, handOver: ReconcileJob.HandOver) {
        let reader: MarkerCatchUp
        do {
            reader = try markerReader.withLock { existing throws(KafkaError) -> MarkerCatchUp in
                if let existing { return existing }
                let created = try MarkerCatchUp(properties: context.configuration.consumerProperties,
                                                topic: context.configuration.topics.markers, logger: context.logger, timeoutMs: 10_000,
                                                undecodable: context.metrics.undecodableMarkers)
                existing = created
                return created
            }
        } catch {
            context.logger.error("markers cannot be read; answering without the previous owner's answer",
                                 [("error", .string(error.description))])
            context.metrics.countReconcile("no_state_api")
            publishFinal(held, outcome: OutcomeTable.reconcileCheckWallet())
            return
        }
        reader.lookUp(requestID: held.job.requestID, replayOf: handOver.replayOf, partition: handOver.markersPartition,
                      from: handOver.markersFrom) { [self] found in
            DispatchQueue.global().async { self.previousOwner(held, found: found) }
        }
    }

    private func previousOwner(_ held: Held, found: MarkerCatchUp.Completion) {
        let job = held.job
        switch found {
        case .answered:
            // Its result is the final one (or its own reconciliation will publish it).
            context.metrics.countReconcile("previous_owner_answered")
            context.audit.publish([auditEvent(.reconciled, held, status: nil, attempt: job.attempt,
                                              reason: AuditReason("previous_owner_answered"))], traceparent: job.traceparent)
            done(held)
        case .notFound where job.attempt < min(Self.handOverLooks, context.reconcileTiers.maximumAttempts):
            retryLater(held, reason: "waiting for the previous owner's answer")
        case .notFound, .deadLettered:
            context.metrics.countReconcile("no_state_api")
            publishFinal(held, outcome: OutcomeTable.reconcileCheckWallet())
        }
    }

    private func retryLater(_ held: Held, reason: StaticString) {
        let job = held.job
        let now = context.clock()
        guard let due = context.reconcileTiers.dueTime(attempt: job.attempt + 1, scheduledAtMs: now) else {
            exhausted(held, reason: "reconciliation attempts exhausted")
            return
        }
        var nextJob = job
        nextJob.attempt += 1
        nextJob.dueAtMs = due
        let next = nextJob
        let message = KafkaOutgoingMessage(topic: context.configuration.topics.reconcile, key: Array(job.requestID.utf8),
                                           value: next.encodedJSON(), headers: held.headers)
        context.publisher.publish([message]) { [self] outcome in
            if outcome.allDelivered {
                context.audit.publish([auditEvent(.reconcileScheduled, held, status: .indeterminate, attempt: next.attempt,
                                                  reason: AuditReason(reason))], traceparent: job.traceparent)
                done(held)
            } else {
                exhausted(held, reason: "the next reconciliation attempt could not be scheduled")
            }
        }
    }

    /// Out of attempts: a final `check_wallet` result for the backend and a dead letter for operators
    /// (parked, not replayable, when the job was itself a replay: a replay that fails again never loops).
    private func exhausted(_ held: Held, reason: String) {
        let outcome = OutcomeTable.reconcileExhausted()
        let job = held.job
        let result = makeResult(job, outcome: outcome, payment: nil)
        let summary = DeadLetterSummary(value: nil, recordTimestampMs: nil)
        let now = context.clock()
        let replayOf = Self.replayOf(held)
        let verdict = DeadLetterReplayPolicy.verdict(code: .reconcileExhausted, summary: summary, issuerMayHaveBeenCalled: true, nowMs: now)
        var retry = job
        retry.attempt = 1
        retry.dueAtMs = 0
        // The dead letter's value is the job, reply route included: a replay answers where the request asked.
        let letter = deadLetters.letter(
            key: Array(job.requestID.utf8), value: retry.encodedJSON(), headers: traceHeaders(job),
            source: .init(partition: held.partition, offset: held.offset, timestampMs: job.firstIndeterminateAtMs),
            code: .reconcileExhausted, reason: reason, attempts: job.attempt, firstFailedAtMs: job.firstIndeterminateAtMs, nowMs: now,
            replayOf: replayOf, replay: verdict,
            parkedReason: "a replayed reconciliation that failed again: parked so it cannot loop; ask the device wallet or the issuer")
        let messages = resultMessages(held, result) + [letter.message]
        context.metrics.countDeadLetter(code: DeadLetterCode.reconcileExhausted.rawValue, parked: letter.isParked)
        context.publisher.publish(messages, attempts: .max) { [self] delivery in
            guard delivery.allDelivered else { return notAcknowledged(held, error: delivery.lastError) }
            context.metrics.countResult(result)
            context.audit.publish([auditEvent(.deadLettered, held, status: .indeterminate, attempt: job.attempt,
                                              reason: AuditReason("reconcile_exhausted"))], traceparent: job.traceparent)
            done(held)
        }
    }

    private func publishFinal(_ held: Held, outcome: Outcome, payment: PaymentResult? = nil) {
        let job = held.job
        let result = makeResult(job, outcome: outcome, payment: payment)
        context.publisher.publish(resultMessages(held, result), attempts: .max) { [self] delivery in
            guard delivery.allDelivered else { return notAcknowledged(held, error: delivery.lastError) }
            context.metrics.countResult(result)
            context.audit.publish([auditEvent(.reconciled, held, status: outcome.status, code: outcome.code, attempt: job.attempt,
                                              reason: AuditReason(outcome))], traceparent: job.traceparent)
            done(held)
        }
    }

    private func makeResult(_ job: ReconcileJob, outcome: Outcome, payment: PaymentResult?) -> ProvisioningResult {
        ProvisioningResult(requestID: job.requestID, program: job.program, issuer: job.issuer, wallet: job.wallet, kind: job.kind,
                           status: outcome.status, isFinal: outcome.isFinal, code: outcome.code, message: outcome.message,
                           nextAction: outcome.nextAction, payment: payment,
                           timing: ResultTiming(windowStartMs: job.windowStartMs, deadlineMs: job.deadlineMs, publishedAtMs: context.clock()),
                           attempt: job.attempt + 1)
    }

    private func auditEvent(_ stage: AuditStage, _ held: Held, status: ResultStatus?, code: ErrorCode? = nil, attempt: Int,
                            reason: AuditReason) -> AuditEvent {
        AuditEvent(requestID: held.job.requestID, stage: stage, atMs: context.clock(), program: held.job.program, issuer: held.job.issuer,
                   wallet: held.job.wallet, status: status, code: code, attempt: attempt, partition: held.partition.partition,
                   offset: held.offset, worker: context.configuration.workerID, cardRef: context.pseudonymizer.cardRef(held.job.cardID),
                   reason: reason)
    }

    private func traceHeaders(_ job: ReconcileJob) -> [KafkaHeader] {
        job.traceparent.map { [KafkaHeader(key: "traceparent", string: $0)] } ?? []
    }

    /// The dead letter a held job replays (`x-replay-of`), when an operator replayed it.
    private static func replayOf(_ held: Held) -> String? {
        held.headers.last { $0.key == DeadLetterHeader.replayOf }?.value.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Headers of a job's result: the trace context and, for a replayed job, `x-replay-of`.
    private func resultHeaders(_ held: Held) -> [KafkaHeader] {
        traceHeaders(held.job) + (Self.replayOf(held).map { [KafkaHeader(key: DeadLetterHeader.replayOf, string: $0)] } ?? [])
    }

    /// A job's result along the request's reply route (checked against today's `results.reply_topics`).
    private func resultMessages(_ held: Held, _ result: ProvisioningResult) -> [KafkaOutgoingMessage] {
        context.replyRouting.messages(requestID: held.job.requestID, value: result.encodedJSON(),
                                      route: context.replyRouting.recheck(held.job.reply), headers: resultHeaders(held))
    }

    private func deadLetterRecord(_ message: KafkaMessage, generation: UInt64, reason: String) {
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        let now = context.clock()
        // Never parked: a record that does not read has no replay header to trust.
        let dead = deadLetters.letter(
            key: message.key, value: message.value, headers: [], source: .init(partition: partition, offset: message.offset, timestampMs: message.timestampMs),
            code: .invalidReconcileJob, reason: reason, attempts: 1, firstFailedAtMs: now, nowMs: now, replayOf: nil,
            replay: DeadLetterReplayPolicy.verdict(code: .invalidReconcileJob, summary: DeadLetterSummary(value: nil, recordTimestampMs: nil),
                                                   issuerMayHaveBeenCalled: false, nowMs: now),
            parkedReason: "").message
        context.logger.warning("reconciliation record refused: dead-lettered",
                               [("partition", .integer(Int64(message.partition))), ("offset", .integer(message.offset)),
                                ("reason", .string(reason))])
        context.publisher.publish([dead], attempts: .max) { [self] outcome in
            guard outcome.allDelivered else { return }  // the producer failed for good: left uncommitted
            context.metrics.countDeadLetter(code: DeadLetterCode.invalidReconcileJob.rawValue, parked: false)
            complete(partition, offset: message.offset, generation: generation)
        }
    }

    /// The job's outputs could not be written (the producer failed for good): it stays
    /// uncommitted, so it runs again after a restart.
    private func notAcknowledged(_ held: Held, error: KafkaError?) {
        context.logger.error("reconciliation outputs not acknowledged: the job stays uncommitted",
                             [("error", .string(error?.description ?? "unknown"))])
        state.withLock { $0.running -= 1 }
        queryEnded.wake()
    }

    private func done(_ held: Held) {
        state.withLock { $0.running -= 1 }
        queryEnded.wake()
        complete(held.partition, offset: held.offset, generation: held.generation)
        runDue()
    }

    private func complete(_ partition: TopicPartition, offset: Int64, generation: UInt64) {
        state.withLock { state in
            guard var entry = state.trackers[partition], entry.generation == generation else { return }
            entry.tracker.complete(offset)
            state.trackers[partition] = entry
        }
    }

    private func commitIfDue(force: Bool) {
        let now = context.clock()
        let candidates = state.withLock { state -> [TopicPartitionOffset] in
            guard force || now - state.lastCommitMs >= 200 else { return [] }
            state.lastCommitMs = now
            return state.trackers.compactMap { partition, entry in
                guard let offset = entry.tracker.committableOffset, offset != entry.lastCommitted else { return nil }
                return TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: offset, metadata: nil)
            }
        }
        guard !candidates.isEmpty else { return }
        do {
            try consumer.commit(candidates, synchronously: force)
            if force { recordCommitted(candidates) }
        } catch {
            context.logger.warning("reconcile commit failed; will retry", [("error", .string(error.description))])
        }
    }

    private func recordCommitted(_ offsets: [TopicPartitionOffset]) {
        state.withLock { state in
            for item in offsets {
                state.trackers[TopicPartition(topic: item.topic, partition: item.partition)]?.lastCommitted = item.offset
            }
        }
    }

    // MARK: - Rebalance (poll thread)

    private func assigned(_ partitions: [TopicPartition]) {
        let resume = state.withLock { state -> [TopicPartition] in
            for partition in partitions {
                state.trackers[partition] = (PartitionOffsetTracker(), state.nextGeneration, nil)
                state.nextGeneration += 1
            }
            let resume = state.libraryPaused.intersection(partitions)
            state.libraryPaused.subtract(resume)
            return Array(resume)
        }
        // librdkafka keeps a partition's pause across a revoke and a new assignment: one paused at
        // the hold limit before the rebalance would never be fetched again.
        if !resume.isEmpty { consumer.resume(resume) }
        context.logger.info("reconciliation partitions assigned",
                            [("partitions", .string(Self.names(partitions))), ("resumed", .string(Self.names(resume)))])
    }

    private func revoked(_ partitions: [TopicPartition], commit: Bool) {
        let gone = Set(partitions)
        let (dropped, wasPaused) = state.withLock { state -> (Int, Set<TopicPartition>) in
            let dropped = state.held.removeAll { gone.contains($0.partition) }.count
            for partition in partitions { state.heldPerPartition[partition] = nil }
            state.paused.subtract(gone)
            state.resumeWanted.subtract(gone)
            // Still paused in librdkafka (resumed when assigned again), but no longer this worker's to show.
            return (dropped, state.libraryPaused.intersection(gone))
        }
        for partition in wasPaused { context.metrics.setPartitionPaused(partition, false) }
        context.logger.info(commit ? "reconciliation partitions revoked" : "reconciliation partitions lost",
                            [("partitions", .string(Self.names(partitions))), ("held_dropped", .integer(Int64(dropped)))])
        if commit {
            _ = queryEnded.wait(timeoutMs: context.configuration.revokeDrainMs) { state.withLock { $0.running == 0 } }
            commitIfDue(force: true)
        }
        state.withLock { state in
            for partition in partitions { state.trackers[partition] = nil }
        }
    }
}
