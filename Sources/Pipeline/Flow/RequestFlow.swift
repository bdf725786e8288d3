import Contract
import Issuers
import Kafka
import Observability
import Recovery
import Synchronization

/// The life of one request, in three stages, each with one owner:
///
/// 1. **Intake** (this file): `accept` (poll thread) hands the record to its partition's serial
///    queue on the worker pool, so records of one partition are decided in order and partitions in
///    parallel; `Intake.decide` says what to do (`IntakeDecision`) and `carryOut` does it: a dead
///    letter, a rejection, a duplicate ignored, a reconciliation, or a job for the scheduler.
/// 2. **The call** (`RequestFlow+Call`): the scheduler's decisions start calls, expire or refuse
///    jobs; a call writes its `started` marker, confirms no newer owner fenced the partition, calls
///    the issuer within the budget, and builds the result (payload encrypted to `reply.jwk`).
/// 3. **Settlement** (`RequestFlow+Delivery`, `Settler`): the result (and a reconciliation job when
///    the answer was lost) or a dead letter is published, and `Settler.settle` — for every exit —
///    writes the `completed` marker, finishes or releases the duplicate claim, and completes or
///    abandons the offset.
///
/// Threads: the poll thread only in `accept`; everything else on the worker pool (`pool`), on the
/// producer's delivery thread (completions, which hand off to the pool for anything longer than
/// bookkeeping), or in the scheduler's `carryOut`.
final class RequestFlow: Sendable {
    let context: WorkerContext
    /// The worker pool (`Executor.pool`).
    let pool: any WorkQueue
    private let partitionQueues = Mutex<[TopicPartition: any WorkQueue]>([:])
    private let relay: Relay
    let scheduler: CallScheduler
    let settler: Settler
    let markers: MarkerWriter
    /// Each program's `max_unsettled` places.
    let quota: UnsettledQuota

    /// Intake with the secrets in use now (a file secret that changed applies from the next poll's
    /// records). Built once per poll's records, not per record: it copies the configuration and
    /// takes the secrets' lock.
    var intake: Intake { Intake(context: context) }

    /// Dead letters sealed with the replay key in use now.
    var deadLetters: DeadLetterBuilder {
        DeadLetterBuilder(deadLetterTopic: context.configuration.topics.deadLetters, parkedTopic: context.configuration.topics.parked,
                          worker: context.configuration.workerID, group: context.configuration.groupID, seal: context.secrets.current.deadLetterSeal(nowMs: context.clock()))
    }

    /// Breaks the reference cycle between the flow and its scheduler's callbacks (weakly).
    private final class Relay: Sendable {
        private struct Weak { weak var flow: RequestFlow? }
        private let flow = Mutex(Weak())
        func set(_ target: RequestFlow?) { flow.withLock { $0.flow = target } }
        var target: RequestFlow? { flow.withLock { $0.flow } }
    }

    init(context: WorkerContext) {
        self.context = context
        pool = context.executor.pool
        let relay = Relay()
        self.relay = relay
        let metrics = context.metrics
        let logger = context.logger
        let audit = context.audit
        let scheduler = CallScheduler(
            settings: context.configuration.scheduler, clock: context.clock, timer: context.executor.timer(label: "provisioner.scheduler-timer"),
            // A start writes its marker where the decision was made; an answer without a call
            // hops to the pool (`carryOut`).
            carryOut: { decisions in relay.target?.carryOut(decisions) },
            breakerChanged: { endpoint, state in
                metrics.countBreakerTransition(endpoint: endpoint, to: state.rawValue)
                logger.notice("circuit breaker changed state", [("endpoint", .string(endpoint)), ("state", .string(state.rawValue))])
                let issuer = endpoint.split(separator: " ").first.flatMap { IssuerKind(rawValue: String($0)) }
                let reason: AuditReason = switch state {
                case .open: AuditReason("circuit breaker opened: calls are refused without reaching the issuer")
                case .halfOpen: AuditReason("circuit breaker half-open: probing the issuer")
                case .closed: AuditReason("circuit breaker closed: the issuer answers again")
                }
                audit.publish([AuditEvent(requestID: nil, stage: .breakerChanged, atMs: context.clock(), issuer: issuer,
                                          worker: context.configuration.workerID, reason: reason)], traceparent: nil)
            })
        self.scheduler = scheduler
        let markers = MarkerWriter(publisher: context.publisher, ledger: context.ledger, fencing: context.fencing,
                                   topic: context.configuration.topics.markers)
        self.markers = markers
        // A cap of max_pending or more never binds: the worker holds no more than that.
        let quota = UnsettledQuota(caps: context.configuration.programs.mapValues { context.configuration.maxUnsettled(for: $0) }
            .filter { $0.value < context.configuration.maxPending })
        self.quota = quota
        var settler = Settler(duplicates: context.duplicates, ledger: context.ledger, horizon: context.horizon,
                              workerID: context.configuration.workerID, logger: context.logger, clock: context.clock,
                              freeSlot: { scheduler.finish(ticketID: $0, success: $1) }, releaseQuota: { quota.release($0) },
                              writeMarker: { marker, origin, untilAcknowledged, completion in
                                  markers.write(marker, for: origin, attempts: untilAcknowledged ? .max : nil, completion: completion)
                              })
        settler.withoutCallOutOfHorizon = context.mutations.answersWithoutCallOutOfHorizon
        self.settler = settler
        relay.set(self)
    }

    /// The worker's logger with where `origin` was read (partition and offset) in every record.
    func logger(for origin: RecordOrigin) -> Logger {
        context.logger.with(origin.logFields)
    }

    /// Stops the scheduler's timer and drops the callback link.
    func stop() {
        scheduler.stop()
        relay.set(nil)
    }

    // MARK: - Accept

    /// Called on the poll thread with one poll's records of requests partition `partition` that
    /// the ledger tracks, in offset order, each with its ledger generation: one hop to the
    /// partition's serial queue takes them all through intake, in that order.
    func accept(_ records: [(message: KafkaMessage, generation: UInt64)], partition: TopicPartition) {
        guard !records.isEmpty else { return }
        let receivedAtMs = context.clock()
        queue(for: partition).async { [self] in
            let current = intake
            for record in records {
                intake(record.message.value, origin: RecordOrigin(message: record.message, generation: record.generation, receivedAtMs: receivedAtMs),
                       using: current)
            }
        }
    }

    /// Forgets the serial queues of partitions no longer owned.
    func forget(_ partitions: [TopicPartition]) {
        partitionQueues.withLock { queues in
            for partition in partitions { queues[partition] = nil }
        }
    }

    /// Takes queued jobs of these partitions back from the scheduler: they were never started and
    /// are redelivered to the next owner.
    func giveBack(_ partitions: [TopicPartition]) {
        for job in scheduler.removeWaiting(partitions: Set(partitions)) {
            settler.settle(.abandoned, origin: job.origin, identity: job.identity, claimed: true)
        }
    }

    private func queue(for partition: TopicPartition) -> any WorkQueue {
        partitionQueues.withLock { queues in
            if let queue = queues[partition] { return queue }
            let queue = context.executor.serialQueue(label: "provisioner.partition.\(partition.partition)", onPool: true)
            queues[partition] = queue
            return queue
        }
    }

    // MARK: - Intake

    /// An operator's replay of a request that has an answer or a call of its own (intake's
    /// `lookUpOriginal`): the markers say whether that answer is a decision never published
    /// (published now, as decided) or not (the replay is a duplicate). Markers that cannot be read
    /// also make it a duplicate: a replay never becomes a second call, and the operator may replay again.
    private func lookUpOriginal(_ job: ProvisioningJob, replayBy: String?, ownMarker: CallMarker.State?, value: [UInt8], origin: RecordOrigin) {
        let reader: MarkerCatchUp
        do {
            reader = try context.decider.markerReader()
        } catch {
            logger(for: origin).error("markers cannot be read to judge an operator's replay: judged a duplicate",
                                      [("error", .string(error.description))])
            return carryOut(.duplicate(job, inFlight: false, claimed: true), value: value, origin: origin)
        }
        reader.lookUpRetained(key: CallMarker.key(job.identity, replayOf: nil), partition: origin.partition.partition) { [self] found in
            queue(for: origin.partition).async { [self] in
                guard context.ledger.isOwned(origin.partition, generation: origin.generation) else {
                    return settler.settle(.abandoned, origin: origin, identity: job.identity, claimed: true)
                }
                if found == nil {
                    logger(for: origin).error("markers could not be read to judge an operator's replay: judged a duplicate")
                }
                if let found, let decision = found.decision, !found.decisionPublished,
                   let decided = try? ProvisioningResult.decode(decision.result) {
                    return carryOut(.republish(job, result: decided, encoded: decision.result), value: value, origin: origin)
                }
                // No final and no call started for the original (it ended in a dead letter before
                // either): the replay runs like the request itself.
                if let found, found.decision == nil, found.completion != .answered, !found.started {
                    return carryOut(intake.proceed(job, ownMarker: ownMarker, replayBy: replayBy, nowMs: context.clock()), value: value, origin: origin)
                }
                carryOut(.duplicate(job, inFlight: false, claimed: true), value: value, origin: origin)
            }
        }
    }

    private func intake(_ value: [UInt8], origin received: RecordOrigin, using intake: Intake) {
        guard context.ledger.isOwned(received.partition, generation: received.generation) else {
            settler.settle(.abandoned, origin: received, identity: nil, claimed: false)
            return
        }
        context.probe?.intake(worker: context.configuration.workerID, partition: received.partition, offset: received.offset,
                              generation: received.generation)
        let (origin, decision) = intake.decide(value, received: received, nowMs: context.clock()) { [self] in
            queue(for: received.partition).async { self.intake(value, origin: received, using: self.intake) }
        }
        carryOut(decision, value: value, origin: origin)
    }

    /// Carries out what intake decided.
    private func carryOut(_ decision: IntakeDecision, value: [UInt8], origin: RecordOrigin) {
        switch decision {
        case .deadLetter(let code, let reason, let summary):
            deadLetter(value, origin: origin, code: code, reason: reason, summary: summary)
        case .refuseUnauthentic(let reason, let requestID, let program, let summary):
            refuseUnauthentic(value, origin: origin, reason: reason, requestID: requestID, program: program, summary: summary)
        case .rejectMalformed(let rejection):
            let issuer = rejection.program.flatMap { context.configuration.program($0)?.issuer }
            let result = ProvisioningResult(rejection: rejection, issuer: issuer,
                                            timing: ResultTiming(receivedAtMs: origin.receivedAtMs))
            context.audit.publish([
                context.audit.event(.received, origin: origin, requestID: rejection.requestID, program: rejection.program,
                                    issuer: issuer, wallet: rejection.wallet),
                context.audit.event(.rejected, origin: origin, requestID: rejection.requestID, program: rejection.program,
                                    issuer: issuer, wallet: rejection.wallet, status: .rejected, code: rejection.code,
                                    reason: AuditReason(rejection)),
            ], traceparent: origin.traceparent)
            deliver(Answer(result, origin: origin, value: value, job: nil, route: .early))
        case .rejectEarly(let subject, let code, let message):
            let request = subject.request
            let result = ProvisioningResult(request: request, issuer: subject.issuer, outcome: OutcomeTable.rejection(code: code, message: message),
                                            timing: ResultTiming(receivedAtMs: origin.receivedAtMs))
            context.audit.publish([
                context.audit.event(.received, origin: origin, requestID: request.requestID, program: request.program,
                                    issuer: subject.issuer, wallet: request.wallet, cardRef: subject.cardRef, deviceRef: subject.deviceRef,
                                    last4: request.card.last4),
                context.audit.event(.rejected, origin: origin, requestID: request.requestID, program: request.program,
                                    issuer: subject.issuer, wallet: request.wallet, status: .rejected, code: code,
                                    cardRef: subject.cardRef, deviceRef: subject.deviceRef, last4: request.card.last4, reason: AuditReason(code)),
            ], traceparent: origin.traceparent)
            deliver(Answer(result, origin: origin, value: value, job: nil, route: .early))
        case .awaitOlderAttempt:
            break
        case .duplicate(let job, let inFlight, let claimed):
            context.metrics.countDuplicate()
            context.audit.publish([context.audit.event(.duplicateIgnored, job: job,
                                                       reason: inFlight ? AuditReason("duplicate of a request in flight")
                                                           : AuditReason("duplicate of a request already answered"))],
                                  traceparent: origin.traceparent)
            settler.settle(.duplicate, origin: origin, identity: job.identity, claimed: claimed)
        case .republish(let job, let decided, let encoded):
            logger(for: origin).notice("redelivered request already decided by a previous attempt: its decided result is published again")
            publish(Answer(decided, origin: origin, value: value, job: job, route: .republished), encoded: encoded, decided: true)
        case .lookUpOriginal(let job, let replayBy, let ownMarker):
            lookUpOriginal(job, replayBy: replayBy, ownMarker: ownMarker, value: value, origin: origin)
        case .admitted(let job, let replayBy, let next):
            context.audit.publish([context.audit.event(.received, job: job, operator: replayBy)], traceparent: origin.traceparent)
            switch next {
            case .recover:
                recoverFromMarker(job)
            case .invalid(let failure):
                let result = ProvisioningResult(request: job.request, issuer: job.program.issuer, failure: failure,
                                                timing: ResultTiming(window: job.window, receivedAtMs: origin.receivedAtMs))
                context.audit.publish([context.audit.event(.rejected, job: job, status: .rejected, code: failure.code,
                                                           reason: AuditReason(failure))], traceparent: origin.traceparent)
                deliver(Answer(result, origin: origin, value: value, job: job, route: .withoutCall))
            case .answer(let outcome, let stage):
                answerWithoutCall(job, outcome: outcome, stage: stage)
            case .submit(let minimumBudgetMs):
                // A program at its cap is answered at once, so it never holds the partitions,
                // which other programs' requests share, paused.
                guard quota.limits(job.program.name) else { return scheduler.submit(job, minimumBudgetMs: minimumBudgetMs) }
                guard quota.acquire(job.program.name) else {
                    context.metrics.countRefusal(reason: SchedulerRefusal.maxUnsettled.rawValue, program: job.program.name)
                    return answerWithoutCall(job, outcome: OutcomeTable.rateLimitedBeforeCall(wallet: job.request.wallet, kind: job.request.kind),
                                             stage: .rejected)
                }
                var origin = job.origin
                origin.quotaProgram = job.program.name
                scheduler.submit(job.with(origin: origin), minimumBudgetMs: minimumBudgetMs)
            }
        }
    }

    /// A message that failed its signature check: no result anywhere, and nothing it names is
    /// touched (duplicate filter, markers, nonce guard); an audit event, a metric and a dead letter
    /// that cannot be replayed.
    private func refuseUnauthentic(_ value: [UInt8], origin: RecordOrigin, reason: String, requestID: String?, program: String?,
                                   summary: DeadLetterSummary?) {
        let configuredProgram = program.flatMap { context.configuration.program($0) }
        context.metrics.countUnauthenticated(replay: origin.replayOf != nil)
        logger(for: origin).warning("message failed its signature check: dead-lettered, not answered",
                                    [("program", .string(configuredProgram?.name ?? "unknown"))])
        context.audit.publish([context.audit.event(.rejected, origin: origin, requestID: requestID, program: configuredProgram?.name,
                                                   issuer: configuredProgram?.issuer, wallet: nil, status: .rejected, code: .unauthenticated,
                                                   reason: AuditReason("the message failed its signature check: not answered"))],
                              traceparent: origin.traceparent)
        deadLetter(value, origin: origin, code: .unauthenticated, reason: reason, summary: summary)
    }
}
