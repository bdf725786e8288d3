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
/// earliest). A partition is paused while it holds `maxHeldPerPartition` jobs, so a long tier
/// cannot pull the topic into memory. A due job asks the issuer for its state: a definitive
/// answer publishes the final, truthful result; an unusable one schedules the next tier; the last
/// tier publishes a final `check_wallet` result and dead-letters the job for operators.
/// Offsets are committed contiguously, like requests. Its consumer group is `<group_id>.reconcile`.
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
    private let listener: Listener
    private let state = Mutex(State())
    private let timer = DispatchTimer(label: "provisioner.reconcile-timer")
    private let finishedSignal = DispatchSemaphore(value: 0)
    private let maxHeldPerPartition: Int
    private let maxRunning: Int
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
        var paused: Set<TopicPartition> = []
        var running = 0
        var nextGeneration: UInt64 = 1
        var lastCommitMs: Int64 = 0
    }

    private final class Listener: KafkaRebalanceListener {
        private let target = Mutex<ReconcileRunner?>(nil)
        func attach(_ runner: ReconcileRunner?) { target.withLock { $0 = runner } }
        func partitionsAssigned(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
            target.withLock { $0 }?.assigned(partitions)
        }
        func partitionsRevoked(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
            target.withLock { $0 }?.revoked(partitions, commit: true)
        }
        func partitionsLost(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
            target.withLock { $0 }?.revoked(partitions, commit: false)
        }
        func committed(_ offsets: [TopicPartitionOffset]) {
            target.withLock { $0 }?.recordCommitted(offsets)
        }
    }

    init(context: WorkerContext, maxHeldPerPartition: Int = 1_000, maxRunning: Int = 64) throws(KafkaError) {
        self.context = context
        self.maxHeldPerPartition = maxHeldPerPartition
        self.maxRunning = maxRunning
        var properties = context.configuration.consumerProperties
        properties["group.id"] = context.configuration.groupID + ".reconcile"
        properties["enable.auto.commit"] = "false"
        properties["enable.auto.offset.store"] = "false"
        if properties["auto.offset.reset"] == nil { properties["auto.offset.reset"] = "earliest" }
        let listener = Listener()
        self.listener = listener
        // An asynchronous commit counts only once the coordinator accepted it; a refused one is
        // sent again on the next cycle.
        consumer = try KafkaConsumer(configuration: properties, rebalanceListener: listener) { outcome in
            if case .success(let offsets) = outcome { listener.committed(offsets) }
        }
        listener.attach(self)
        timer.setHandler { [weak self] in self?.runDue() }
    }

    /// Subscribes and starts the poll thread.
    func start() throws(KafkaError) {
        try consumer.subscribe([context.configuration.topics.reconcile])
        let thread = Thread { [self] in run() }
        thread.name = "provisioner-reconcile"
        thread.start()
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
        finishedSignal.wait()
        finishedSignal.signal()
    }

    /// Jobs held waiting for their tier (metrics: the reconciliation backlog).
    var backlog: Int { state.withLock { $0.held.count + $0.running } }

    // MARK: - Loop

    private func run() {
        while true {
            let (stopping, deadline, running) = state.withLock { ($0.stopRequested, $0.drainDeadlineMs, $0.running) }
            if stopping && (running == 0 || context.clock() >= deadline) { break }
            for result in consumer.poll(maxMessages: 256, timeoutMs: stopping ? 10 : 50) {
                guard case .success(let message) = result else { continue }
                hold(message)
            }
            commitIfDue(force: false)
        }
        timer.cancel()
        commitIfDue(force: true)
        markerReader.withLock { $0 }?.close()
        consumer.close()
        listener.attach(nil)
        finishedSignal.signal()
    }

    private func hold(_ message: KafkaMessage) {
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        let generation: UInt64? = state.withLock { state in
            // A record fetched again (the consumer rewound after a pause/resume) is already held or done.
            guard var entry = state.trackers[partition], entry.tracker.track(message.offset) else { return nil }
            state.trackers[partition] = entry
            return entry.generation
        }
        guard let generation else { return }
        let job: ReconcileJob
        switch ReconcileJob.read(message.value) {
        case .success(let read): job = read
        case .failure(let problem):
            deadLetterRecord(message, generation: generation, reason: "the record is not a reconciliation job: \(problem.reason)")
            return
        }
        if let replayOf = message.header(DeadLetterHeader.replayOf), ReplayReference(bytes: replayOf) == nil {
            deadLetterRecord(message, generation: generation,
                             reason: "the record's x-replay-of header is not topic:partition:offset within \(ReplayReference.maximumBytes) bytes")
            return
        }
        let held = Held(job: job, partition: partition, offset: message.offset, generation: generation, headers: message.headers)
        let pause = state.withLock { state -> Bool in
            state.held.insert(held)
            state.heldPerPartition[partition, default: 0] += 1
            if state.heldPerPartition[partition]! >= maxHeldPerPartition && !state.paused.contains(partition) {
                state.paused.insert(partition)
                return true
            }
            return false
        }
        if pause {
            consumer.pause([partition])
            context.metrics.setPartitionPaused(partition, true)
        }
        armTimer()
    }

    private func armTimer() {
        // At the running limit the next `done` runs what is due; a timer in the past would spin.
        let next = state.withLock { $0.running < maxRunning ? $0.held.first?.job.dueAtMs : nil }
        timer.schedule(atMs: next, nowMs: context.clock())
    }

    /// Starts every due job (up to `maxRunning` at once).
    private func runDue() {
        let now = context.clock()
        let (due, resume) = state.withLock { state -> ([Held], [TopicPartition]) in
            var due: [Held] = []
            while state.running < maxRunning, let first = state.held.first, first.job.dueAtMs <= now {
                state.held.popFirst()
                state.heldPerPartition[first.partition, default: 1] -= 1
                state.running += 1
                due.append(first)
            }
            var resume: [TopicPartition] = []
            for partition in state.paused where state.heldPerPartition[partition, default: 0] < maxHeldPerPartition / 2 {
                resume.append(partition)
            }
            state.paused.subtract(resume)
            return (due, resume)
        }
        if !resume.isEmpty { consumer.resume(resume) }
        for partition in resume { context.metrics.setPartitionPaused(partition, false) }
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
            publishFinal(held, outcome: Outcome(status: .provisioned, code: nil, nextAction: .checkWallet, isFinal: true, retry: .never,
                                                message: "reconciled: the issuer applied the call; check the device wallet for the card"))
        case .notApplied:
            context.metrics.countReconcile("not_applied")
            let outcome: Outcome = job.kind == .provision
                ? Outcome(status: .notProvisioned, code: .issuerTimeout, nextAction: OutcomeTable.transientNextAction(kind: job.kind, wallet: job.wallet),
                          isFinal: true, retry: .never, message: "reconciled: the issuer did not apply the call")
                : Outcome(status: .failed, code: .issuerTimeout, nextAction: .retry, isFinal: true, retry: .never,
                          message: "reconciled: no payment exists with this transaction reference")
            publishFinal(held, outcome: outcome)
        case .noStateAPI:
            if let handOver = job.handOver {
                awaitPreviousOwner(held, handOver: handOver)
                return
            }
            context.metrics.countReconcile("no_state_api")
            publishFinal(held, outcome: Self.checkWallet)
        case .payment(let payment):
            context.metrics.countReconcile("payment")
            let status: ResultStatus = switch payment.outcome {
            case "authorized", "sentForAuthorization": .authorized
            case "refused": .refused
            case "settled", "sentForSettlement", "partiallySettled": .settled
            case "cancelled", "sentForCancellation": .cancelled
            default: .indeterminate
            }
            if status == .indeterminate {
                retryLater(held, reason: "unrecognised payment event")
                return
            }
            publishFinal(held, outcome: Outcome(status: status, code: status == .refused ? .paymentRefused : nil, nextAction: .none,
                                                isFinal: true, retry: .never,
                                                message: "reconciled from the payment's events: \(status.rawValue)"), payment: payment)
        case .unknown:
            context.metrics.countReconcile("unknown")
            retryLater(held, reason: "the state query gave no usable answer")
        }
    }

    /// The final answer when the issuer cannot be asked.
    private static let checkWallet = Outcome(status: .indeterminate, code: .issuerTimeout, nextAction: .checkWallet, isFinal: true,
                                             retry: .never,
                                             message: "the issuer offers no state query; ask the device wallet whether the card was added")

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
            publishFinal(held, outcome: Self.checkWallet)
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
            publishFinal(held, outcome: Self.checkWallet)
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
        let outcome = Outcome(status: .indeterminate, code: .issuerUnavailable, nextAction: .checkWallet, isFinal: true, retry: .never,
                              message: "reconciliation could not learn what the issuer did; ask the device wallet")
        let job = held.job
        let result = makeResult(job, outcome: outcome, payment: nil)
        let summary = DeadLetterSummary(value: nil, recordTimestampMs: nil)
        let now = context.clock()
        let replayOf = Self.replayOf(held)
        let parked = replayOf != nil
        let verdict = DeadLetterReplayPolicy.verdict(code: .reconcileExhausted, summary: summary, issuerMayHaveBeenCalled: true, nowMs: now)
        let provenance = DeadLetterProvenance(
            originalTopic: held.partition.topic, originalPartition: held.partition.partition, originalOffset: held.offset,
            originalTimestampMs: job.firstIndeterminateAtMs, code: .reconcileExhausted, reason: reason, attempts: job.attempt,
            firstFailedAtMs: job.firstIndeterminateAtMs, failedAtMs: now, worker: context.configuration.workerID,
            group: context.configuration.groupID + ".reconcile", isReplayable: parked ? false : verdict.isReplayable,
            replayableReason: parked ? "a replayed reconciliation that failed again: parked so it cannot loop; ask the device wallet or the issuer"
                : verdict.reason)
        var retry = job
        retry.attempt = 1
        retry.dueAtMs = 0
        let topics = context.configuration.topics
        // The dead letter's value is the job, reply route included: a replay answers where the request asked.
        let messages = resultMessages(held, result) + [
            KafkaOutgoingMessage(topic: parked ? topics.parked : topics.deadLetters, key: Array(job.requestID.utf8),
                                 value: retry.encodedJSON(), headers: resultHeaders(held) + provenance.headers),
        ]
        context.metrics.countDeadLetter(code: DeadLetterCode.reconcileExhausted.rawValue, parked: parked)
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
        let provenance = DeadLetterProvenance(
            originalTopic: message.topic, originalPartition: message.partition, originalOffset: message.offset,
            originalTimestampMs: message.timestampMs, code: .invalidReconcileJob, reason: reason,
            attempts: 1, firstFailedAtMs: now, failedAtMs: now, worker: context.configuration.workerID,
            group: context.configuration.groupID + ".reconcile", isReplayable: false,
            replayableReason: "the message itself is malformed: fix the producer and send a new request")
        let dead = KafkaOutgoingMessage(topic: context.configuration.topics.deadLetters, key: message.key, value: message.value,
                                        headers: provenance.headers)
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
    }

    private func done(_ held: Held) {
        state.withLock { $0.running -= 1 }
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
        state.withLock { state in
            for partition in partitions {
                state.trackers[partition] = (PartitionOffsetTracker(), state.nextGeneration, nil)
                state.nextGeneration += 1
            }
        }
    }

    private func revoked(_ partitions: [TopicPartition], commit: Bool) {
        let gone = Set(partitions)
        let wasPaused = state.withLock { state -> Set<TopicPartition> in
            _ = state.held.removeAll { gone.contains($0.partition) }
            for partition in partitions { state.heldPerPartition[partition] = nil }
            defer { state.paused.subtract(gone) }
            return state.paused.intersection(gone)
        }
        for partition in wasPaused { context.metrics.setPartitionPaused(partition, false) }
        if commit {
            let deadline = context.clock() + context.configuration.revokeDrainMs
            while state.withLock({ $0.running > 0 }) && context.clock() < deadline { usleep(2_000) }
            commitIfDue(force: true)
        }
        state.withLock { state in
            for partition in partitions { state.trackers[partition] = nil }
        }
    }
}
