import Contract
import Dispatch
import Issuers
import Kafka
import Observability
import Recovery
import Synchronization

/// The life of one request, stage by stage:
///
/// 1. `accept` (poll thread) hands the message to its partition's serial queue on the worker pool,
///    so messages of one partition are decoded in order and partitions in parallel.
/// 2. `intake` decodes, authenticates, drops duplicates, checks markers of a crashed owner,
///    validates, and admits the request to the scheduler — or answers it at once.
/// 3. The scheduler's decisions start calls, expire or refuse jobs.
/// 4. A call writes its `started` marker, calls the issuer within the budget, and `answered`
///    builds the result (payload encrypted to `reply.jwk`).
/// 5. `deliver` publishes the result (and a reconciliation job when the answer was lost); the
///    offset completes only when Kafka acknowledged them and the `completed` marker.
final class RequestFlow: Sendable {
    let context: WorkerContext
    private let pool: DispatchQueue
    private let partitionQueues = Mutex<[TopicPartition: DispatchQueue]>([:])
    private let relay: Relay
    let scheduler: CallScheduler

    /// Breaks the reference cycle between the flow and its scheduler's callbacks.
    private final class Relay: Sendable {
        private let flow = Mutex<RequestFlow?>(nil)
        func set(_ target: RequestFlow?) { flow.withLock { $0 = target } }
        var target: RequestFlow? { flow.withLock { $0 } }
    }

    init(context: WorkerContext) {
        self.context = context
        pool = DispatchQueue(label: "provisioner.workers", qos: .userInitiated, attributes: .concurrent)
        let relay = Relay()
        self.relay = relay
        let metrics = context.metrics
        let logger = context.logger
        let audit = context.audit
        scheduler = CallScheduler(
            settings: context.configuration.scheduler, clock: context.clock,
            // Short work (write a marker, or answer without a call): run it where the decision
            // was made rather than hopping threads.
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
        relay.set(self)
    }

    /// Stops the scheduler's timer and drops the callback link.
    func stop() {
        scheduler.stop()
        relay.set(nil)
    }

    // MARK: - 1. Accept

    /// Called on the poll thread for each message of a requests partition the ledger tracks.
    func accept(_ message: KafkaMessage, generation: UInt64) {
        let origin = RecordOrigin(message: message, generation: generation, receivedAtMs: context.clock())
        let value = message.value
        queue(for: origin.partition).async { [self] in
            intake(value, origin: origin)
        }
    }

    /// Forgets the serial queues of partitions no longer owned.
    func forget(_ partitions: [TopicPartition]) {
        partitionQueues.withLock { queues in
            for partition in partitions { queues[partition] = nil }
        }
    }

    private func queue(for partition: TopicPartition) -> DispatchQueue {
        partitionQueues.withLock { queues in
            if let queue = queues[partition] { return queue }
            let queue = DispatchQueue(label: "provisioner.partition.\(partition.partition)", target: pool)
            queues[partition] = queue
            return queue
        }
    }

    // MARK: - 2. Intake

    private func intake(_ value: [UInt8], origin received: RecordOrigin) {
        var origin = received
        (origin.reply, origin.replyRefusal) = context.replyRouting.check(origin.replyHeaders)
        guard context.ledger.isOwned(origin.partition, generation: origin.generation) else {
            context.ledger.abandon(origin.partition, offset: origin.offset, generation: origin.generation)
            return
        }
        // (An over-size one is left to the decoder, whose dead letter keeps only the value's head.)
        if let problem = origin.replayOfProblem, value.count <= context.requestLimits.maxBytes {
            deadLetter(value, origin: origin, code: .invalidReplayOf, reason: problem, issuerMayHaveBeenCalled: false, requestID: nil)
            return
        }
        let decoding = RequestDecoder.decode(value, limits: context.requestLimits)
        // What a message that does not decode says of itself, read once (its dead letter's summary).
        let summary: DeadLetterSummary? = if case .deadLetter = decoding { self.summary(of: value, origin: origin) } else { nil }
        // Authenticity before anything that can publish a result or touch the duplicate filter,
        // markers or nonce guard: a message that fails it is never answered (CONTRACT section 11).
        let claimed: (requestID: String?, program: String?) = switch decoding {
        case .decoded(let request): (request.requestID, request.program)
        case .rejected(let rejection): (rejection.requestID, rejection.program)
        case .deadLetter: (summary?.requestID, summary?.program)
        }
        let verdict = context.authenticator.verdict(program: claimed.program,
                                                    isConfigured: claimed.program.map { context.configuration.program($0) != nil } ?? false,
                                                    key: origin.key, value: value, headers: origin.headers, nowMs: context.clock())
        if case .unauthentic(let reason) = verdict {
            refuseUnauthentic(value, origin: origin, reason: reason, requestID: claimed.requestID, program: claimed.program, summary: summary)
            return
        }
        switch decoding {
        case .deadLetter(let cause):
            deadLetter(value, origin: origin, code: DeadLetterCode(cause.code), reason: cause.message, summary: summary,
                       issuerMayHaveBeenCalled: false, requestID: summary?.requestID, claimsRequestID: false)
        case .rejected(let rejection):
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
            deliver(result, origin: origin, value: value, job: nil, reconcile: nil, startedMarker: false, issuerMayHaveBeenCalled: false)
        case .decoded(let request):
            let replayBy: String? = if case .authentic(let replayBy) = verdict { replayBy } else { nil }
            admit(request, value: value, origin: origin, replayBy: replayBy)
        }
    }

    /// A message that failed its signature check: no result anywhere, and nothing it names is
    /// touched (duplicate filter, markers, nonce guard); an audit event, a metric and a dead letter
    /// that cannot be replayed.
    private func refuseUnauthentic(_ value: [UInt8], origin: RecordOrigin, reason: String, requestID: String?, program: String?,
                                   summary: DeadLetterSummary?) {
        let configuredProgram = program.flatMap { context.configuration.program($0) }
        context.metrics.countUnauthenticated(replay: origin.replayOf != nil)
        context.logger.warning("message failed its signature check: dead-lettered, not answered",
                               [("partition", .integer(Int64(origin.partition.partition))), ("offset", .integer(origin.offset)),
                                ("program", .string(configuredProgram?.name ?? "unknown"))])
        context.audit.publish([context.audit.event(.rejected, origin: origin, requestID: requestID, program: configuredProgram?.name,
                                                   issuer: configuredProgram?.issuer, wallet: nil, status: .rejected, code: .unauthenticated,
                                                   reason: AuditReason("the message failed its signature check: not answered"))],
                              traceparent: origin.traceparent)
        deadLetter(value, origin: origin, code: .unauthenticated, reason: reason, summary: summary, issuerMayHaveBeenCalled: false,
                   requestID: requestID, claimsRequestID: false)
    }

    private func admit(_ request: ProvisioningRequest, value: [UInt8], origin: RecordOrigin, replayBy: String?) {
        let now = context.clock()
        let cardRef = context.pseudonymizer.cardRef(request.card.id)
        let deviceRef = context.pseudonymizer.deviceRef(for: request)
        let configured = context.configuration.program(request.program)
        func early(_ code: ErrorCode, _ message: String) {
            let outcome = OutcomeTable.rejection(code: code, message: message)
            let result = ProvisioningResult(request: request, issuer: configured?.issuer, outcome: outcome,
                                            timing: ResultTiming(receivedAtMs: origin.receivedAtMs))
            context.audit.publish([
                context.audit.event(.received, origin: origin, requestID: request.requestID, program: request.program,
                                    issuer: configured?.issuer, wallet: request.wallet, cardRef: cardRef, deviceRef: deviceRef,
                                    last4: request.card.last4),
                context.audit.event(.rejected, origin: origin, requestID: request.requestID, program: request.program,
                                    issuer: configured?.issuer, wallet: request.wallet, status: .rejected, code: code,
                                    cardRef: cardRef, deviceRef: deviceRef, last4: request.card.last4, reason: AuditReason(code)),
            ], traceparent: origin.traceparent)
            deliver(result, origin: origin, value: value, job: nil, reconcile: nil, startedMarker: false, issuerMayHaveBeenCalled: false)
        }
        // Reply headers covered by the signature (checked already) but malformed or naming a topic
        // not allowed: refused on the default results topic, before anything else is touched.
        if let refusal = origin.replyRefusal {
            early(.invalidRequest, refusal)
            return
        }
        guard let program = configured, let endpoint = context.endpoints[request.program] else {
            early(.unknownProgram, "program '\(AuditEvent.safeIdentifier(request.program))' is not configured on this worker")
            return
        }
        if context.authenticator.requiresSignature(request.program) && request.startedAtMs == nil {
            early(.invalidRequest, "started_at is required: program '\(request.program)' signs its requests")
            return
        }
        // Held by another delivery (an older generation of this partition that may still give
        // up): look again when that attempt ends.
        let duplicate = context.duplicates.begin(request.requestID, owner: .init(origin), nowMs: now) { [self] in
            queue(for: origin.partition).async { self.intake(value, origin: origin) }
        }
        if duplicate == .awaitingOlderAttempt { return }
        let marker = context.markerIndex.state(requestID: request.requestID, replayOf: origin.replayOf, in: origin.partition)
        // A `completed` marker means an earlier attempt finished — answered, or dead-lettered. An
        // operator's replay (`x-replay-of`) of a dead letter has markers of its own (keyed by the
        // dead letter too): the original's `completed` does not make it a duplicate, and its own
        // `started` makes a redelivery after a crash reconcile instead of calling again.
        // Answered within the duplicate horizon (this worker, an earlier owner, or before a
        // restart: catch-up read the `completed` markers back from the horizon). An operator's
        // replay is judged by its own markers only, as above.
        let answeredBefore = duplicate == .fresh && marker != .completed && origin.replayOf == nil
            && context.horizon.contains(request.requestID, in: origin.partition, nowMs: now)
        if duplicate != .fresh || marker == .completed || answeredBefore {
            if duplicate == .fresh { context.duplicates.finish(request.requestID, owner: .init(origin), nowMs: now) }
            context.metrics.countDuplicate()
            context.audit.publish([context.audit.event(.duplicateIgnored, origin: origin, requestID: request.requestID,
                                                       program: request.program, issuer: program.issuer, wallet: request.wallet,
                                                       cardRef: cardRef, deviceRef: deviceRef, last4: request.card.last4,
                                                       reason: duplicate == .inFlight ? AuditReason("duplicate of a request in flight")
                                                           : AuditReason("duplicate of a request already answered"))],
                                  traceparent: origin.traceparent)
            context.ledger.complete(origin.partition, offset: origin.offset, generation: origin.generation)
            return
        }
        let window = context.configuration.deadlines.window(for: request, recordTimestampMs: origin.timestampMs, receivedAtMs: origin.receivedAtMs)
        var job = ProvisioningJob(origin: origin, value: value, request: request, program: program, endpoint: endpoint,
                                  window: window, cardRef: cardRef, deviceRef: deviceRef)
        context.audit.publish([context.audit.event(.received, job: job, operator: replayBy)], traceparent: origin.traceparent)
        if marker == .started {
            job.recoveredFromMarker = true
            recoverFromMarker(job)
            return
        }
        if let failure = context.validator.validate(request, issuer: program.issuer, nonceGuard: context.nonceGuard, nowMs: now) {
            let result = ProvisioningResult(request: request, issuer: program.issuer, failure: failure,
                                            timing: ResultTiming(window: window, receivedAtMs: origin.receivedAtMs))
            context.audit.publish([context.audit.event(.rejected, job: job, status: .rejected, code: failure.code,
                                                       reason: AuditReason(failure))], traceparent: origin.traceparent)
            deliver(result, origin: origin, value: value, job: job, reconcile: nil, startedMarker: false, issuerMayHaveBeenCalled: false)
            return
        }
        // Built now, so a request that cannot become a call (a payment link to another host, a
        // wallet the issuer does not take) is rejected before any marker or audit says a call started.
        do {
            job.call = try context.issuerClient.prepare(request, endpoint: endpoint)
        } catch {
            answerWithoutCall(job, outcome: OutcomeTable.rejection(code: error.code, message: error.message), stage: .rejected)
            return
        }
        if context.configuration.scheduler.ordering == .earliestDeadlineFirst,
           !context.configuration.deadlines.admit(window, nowMs: now,
                                                  minimumIssuerBudgetMs: program.minimumBudgetMs + context.configuration.publishReserveMs).isAdmitted {
            answerWithoutCall(job, outcome: OutcomeTable.expiredBeforeCall(wallet: request.wallet, kind: request.kind), stage: .expired)
            return
        }
        scheduler.submit(job, minimumBudgetMs: program.minimumBudgetMs + context.configuration.publishReserveMs)
    }

    // MARK: - 3. Scheduler decisions

    private func carryOut(_ decisions: [SchedulerDecision<ProvisioningJob>]) {
        for decision in decisions {
            switch decision {
            case .start(let ticket, _):
                startCall(ticket.payload, ticketID: ticket.id)
            case .expire(let ticket):
                let job = ticket.payload
                answerWithoutCall(job, outcome: OutcomeTable.expiredBeforeCall(wallet: job.request.wallet, kind: job.request.kind), stage: .expired)
            case .refuse(let ticket, let reason):
                let job = ticket.payload
                context.metrics.countRefusal(reason: reason.rawValue, program: job.request.program)
                let outcome: Outcome = switch reason {
                case .breakerOpen:
                    Outcome(status: .failed, code: .issuerUnavailable, nextAction: .surfaceError, isFinal: true, retry: .never,
                            message: "the issuer is failing (circuit breaker open); it was not called")
                case .rateLimited:
                    Outcome(status: .failed, code: .rateLimited,
                            nextAction: OutcomeTable.transientNextAction(kind: job.request.kind, wallet: job.request.wallet),
                            isFinal: true, retry: .never, message: "the program's rate limit toward the issuer had no room before the deadline; it was not called")
                }
                answerWithoutCall(job, outcome: outcome, stage: .rejected)
            }
        }
    }

    // MARK: - 4. The call

    private func startCall(_ job: ProvisioningJob, ticketID: UInt64) {
        let origin = job.origin
        guard context.ledger.isOwned(origin.partition, generation: origin.generation) else {
            scheduler.finish(ticketID: ticketID, success: nil)
            context.duplicates.release(job.request.requestID, owner: .init(origin))
            context.ledger.abandon(origin.partition, offset: origin.offset, generation: origin.generation)
            return
        }
        let markers = origin.partition.partition
        guard let epoch = context.fencing.epoch(markers, generation: origin.generation) else {
            // Not fenced in this generation (cannot happen once resumed): never call unfenced.
            scheduler.finish(ticketID: ticketID, success: nil)
            context.duplicates.release(job.request.requestID, owner: .init(origin))
            context.ledger.abandon(origin.partition, offset: origin.offset, generation: origin.generation)
            return
        }
        let marker = CallMarker(requestID: job.request.requestID, state: .started, requestOffset: origin.offset,
                                atMs: context.clock(), worker: context.configuration.workerID, replayOf: origin.replayOf,
                                fence: epoch, instance: context.fencing.instance)
        context.ledger.markerWriting(origin.partition, requestOffset: origin.offset, generation: origin.generation)
        context.fencing.writing(markers)
        context.publisher.publish([marker.message(topic: context.configuration.topics.markers, partition: markers)],
                                  attempts: 3) { [self] outcome in
            let markerOffset = outcome.reports.first??.offset
            context.fencing.written(markers, offset: markerOffset)
            context.ledger.markerWritten(origin.partition, requestOffset: origin.offset,
                                         markerOffset: markerOffset, generation: origin.generation)
            // A broker outage can hold the marker write for seconds, long enough to lose the
            // partition: its new owner may have read the markers without this one and will call the
            // issuer itself. Only a partition still held (owned, or draining a clean revoke) may call.
            guard context.ledger.isHeld(origin.partition, generation: origin.generation) else {
                scheduler.finish(ticketID: ticketID, success: nil)
                context.duplicates.release(job.request.requestID, owner: .init(origin))
                context.ledger.abandon(origin.partition, offset: origin.offset, generation: origin.generation)
                context.logger.notice("partition lost while the call marker was written: the issuer is not called, the new owner redoes the request",
                                      [("partition", .integer(Int64(origin.partition.partition))), ("offset", .integer(origin.offset))])
                return
            }
            guard outcome.allDelivered else {
                scheduler.finish(ticketID: ticketID, success: nil)
                context.logger.error("could not write the call marker; answering without calling the issuer",
                                     [("error", .string(outcome.lastError?.description ?? "unknown"))])
                let failed = Outcome(status: .failed, code: .upstreamError,
                                     nextAction: OutcomeTable.transientNextAction(kind: job.request.kind, wallet: job.request.wallet),
                                     isFinal: true, retry: .ifNotSent, message: "the worker could not record the call in Kafka; the issuer was not called")
                pool.async { self.answerWithoutCall(job, outcome: failed, stage: .rejected) }
                return
            }
            guard let markerOffset else {
                // Acknowledged without an offset (not expected with acks=all): no fence can be checked against it.
                notCalledUnconfirmed(job, ticketID: ticketID)
                return
            }
            confirmFirst(job, ticketID: ticketID, epoch: epoch, at: markerOffset)
        }
    }

    /// Zombie-owner fencing (`MarkerFencing`): calls only when no other process's fence lies
    /// between this owner's fence (`epoch`) and its `started` marker at `offset`; at once (no
    /// read) when every offset between is one of this process's own writes.
    private func confirmFirst(_ job: ProvisioningJob, ticketID: UInt64, epoch: Int64, at offset: Int64) {
        let origin = job.origin
        // The last moment the call could still start with its minimum budget.
        let lastStartMs = context.configuration.scheduler.ordering == .earliestDeadlineFirst
            ? job.window.publishByMs - context.configuration.publishReserveMs - job.program.minimumBudgetMs
            : context.clock() + job.program.timeoutMs
        context.fencing.confirm(partition: origin.partition.partition, epoch: epoch, marker: offset, deadlineMs: lastStartMs) { [self] confirmation in
            if confirmation != .call { context.metrics.countFencing(confirmation) }
            switch confirmation {
            case .call:
                // On the producer's delivery thread or the fencing reader's queue: hand off, so the
                // issuer call (request building, DCS signing, the audit event) holds up neither.
                pool.async { self.call(job, ticketID: ticketID) }
            case .fencedOut:
                // Another process's fence came first: it holds the partition and answers the
                // request (its catch-up ignores this marker); no call, no answer here.
                scheduler.finish(ticketID: ticketID, success: nil)
                context.duplicates.release(job.request.requestID, owner: .init(origin))
                context.ledger.abandon(origin.partition, offset: origin.offset, generation: origin.generation)
                context.logger.warning("a newer owner fenced this partition: the issuer is not called, the new owner redoes the request",
                                       [("partition", .integer(Int64(origin.partition.partition))), ("offset", .integer(origin.offset))])
            case .unconfirmed:
                // The markers stayed unreadable until the call could no longer start in time.
                notCalledUnconfirmed(job, ticketID: ticketID)
            }
        }
    }

    /// Ownership could not be confirmed against the fences in time: no call, an `expired` answer.
    private func notCalledUnconfirmed(_ job: ProvisioningJob, ticketID: UInt64) {
        scheduler.finish(ticketID: ticketID, success: nil)
        var outcome = OutcomeTable.expiredBeforeCall(wallet: job.request.wallet, kind: job.request.kind)
        outcome.message = "the worker could not confirm it still owns the request's partition before the deadline; the issuer was not called"
        let expired = outcome
        pool.async { self.answerWithoutCall(job, outcome: expired, stage: .expired) }
    }

    private func call(_ job: ProvisioningJob, ticketID: UInt64) {
        let edf = context.configuration.scheduler.ordering == .earliestDeadlineFirst
        // The baseline (`fifo`) ignores deadlines and waits out the issuer's own timeout.
        // The call must end early enough to build and publish the result before publish-by.
        let publishBy = edf ? job.window.publishByMs - context.configuration.publishReserveMs : context.clock() + job.program.timeoutMs
        context.audit.publish([context.audit.event(.issuerCallStarted, job: job, attempt: 1)], traceparent: job.origin.traceparent)
        let completion: @Sendable (IssuerCallReport) -> Void = { [self] report in
            pool.async { self.answered(job, ticketID: ticketID, report: report) }
        }
        if let prepared = job.call {
            context.issuerClient.call(prepared, publishByMs: publishBy, completion: completion)
        } else {
            // Every admitted job was prepared at intake; this only keeps the two paths one.
            context.issuerClient.provision(job.request, endpoint: job.endpoint, publishByMs: publishBy, completion: completion)
        }
    }

    private func answered(_ job: ProvisioningJob, ticketID: UInt64, report: IssuerCallReport) {
        scheduler.finish(ticketID: ticketID, success: Self.breakerVerdict(report.answer))
        let request = job.request
        context.metrics.issuerLatency.observe(Double(report.issuerMs))
        var outcome = report.outcome
        let timedOut: Bool = if case .transportFailure(let failure) = report.answer, failure != .abandonedBeforeSend { true } else { false }
        var payload: String?
        if let plain = report.payload, outcome.status == .provisioned {
            do {
                payload = try context.payloadSealer.seal(plain, for: request)
            } catch {
                context.logger.error("could not encrypt a payload to reply.jwk", [("program", .string(request.program))])
                outcome = Outcome(status: .failed, code: .upstreamError, nextAction: .surfaceError, isFinal: true, retry: .never,
                                  message: "the provisioning payload could not be encrypted to reply.jwk")
            }
        }
        context.audit.publish([context.audit.event(timedOut ? .issuerTimedOut : .issuerResponded, job: job, status: outcome.status,
                                                   code: outcome.code, httpStatus: report.httpStatus, latencyMs: Int64(report.issuerMs),
                                                   attempt: report.attempts, reason: AuditReason(outcome))],
                              traceparent: job.origin.traceparent)
        let result = ProvisioningResult(request: request, issuer: job.program.issuer, outcome: outcome, payload: payload,
                                        payment: report.payment,
                                        timing: ResultTiming(window: job.window, receivedAtMs: job.origin.receivedAtMs, issuerMs: Int64(report.issuerMs)),
                                        attempt: 1)
        let reconcile = outcome.status == .indeterminate && !outcome.isFinal ? reconcileJob(for: job) : nil
        let mayHaveBeenCalled = report.requestMayHaveBeenSent
        if case .transportFailure(.abandonedBeforeSend) = report.answer {
            // The budget ran out before sending: the issuer never saw it.
            deliver(result, origin: job.origin, value: job.value, job: job, reconcile: nil, startedMarker: true, issuerMayHaveBeenCalled: false)
            return
        }
        deliver(result, origin: job.origin, value: job.value, job: job, reconcile: reconcile, startedMarker: true,
                issuerMayHaveBeenCalled: mayHaveBeenCalled)
    }

    /// Breaker input: any definitive issuer answer is a success; timeouts, lost connections,
    /// connect failures, 5xx and malformed success bodies are failures; 429 and calls never made are neither.
    static func breakerVerdict(_ answer: IssuerAnswer) -> Bool? {
        switch answer {
        case .success, .payment: true
        case .issuerError(let status, _, _): status == 429 ? nil : status < 500
        case .transportFailure(let failure): failure == .abandonedBeforeSend ? nil : false
        case .invalidSuccessResponse: false
        }
    }

    private func recoverFromMarker(_ job: ProvisioningJob) {
        let request = job.request
        var outcome = OutcomeTable.outcome(for: .transportFailure(.timedOutAfterSend), issuer: job.program.issuer,
                                           wallet: request.wallet, kind: request.kind)
        outcome.message = "a previous worker started this issuer call and stopped before answering; reconciling with the issuer"
        context.logger.notice("redelivered request has a started call marker: reconciling instead of calling again",
                              [("partition", .integer(Int64(job.origin.partition.partition))), ("offset", .integer(job.origin.offset))])
        context.audit.publish([context.audit.event(.issuerTimedOut, job: job, status: outcome.status, code: outcome.code,
                                                   reason: AuditReason("worker restarted during the issuer call"))],
                              traceparent: job.origin.traceparent)
        let result = ProvisioningResult(request: request, issuer: job.program.issuer, outcome: outcome,
                                        timing: ResultTiming(window: job.window, receivedAtMs: job.origin.receivedAtMs), attempt: 1)
        // The previous owner may only have lost the partition, not died: its answer can still come.
        let handOver = ReconcileJob.HandOver(markersPartition: job.origin.partition.partition,
                                             markersFrom: context.markerIndex.readFrom(job.origin.partition) ?? 0,
                                             replayOf: job.origin.replayOf)
        deliver(result, origin: job.origin, value: job.value, job: job, reconcile: reconcileJob(for: job, handOver: handOver), startedMarker: true,
                issuerMayHaveBeenCalled: true, recovered: true)
    }

    private func reconcileJob(for job: ProvisioningJob, handOver: ReconcileJob.HandOver? = nil) -> ReconcileJob {
        let now = context.clock()
        let request = job.request
        // A hand-over's first look waits until the previous owner, whose call may still be under
        // way (its timeout, a Retry-After wait), can no longer answer: the request's publish-by.
        let tierDueMs = context.reconcileTiers.dueTime(attempt: 1, scheduledAtMs: now) ?? now
        let dueAtMs = handOver == nil ? tierDueMs : max(tierDueMs, job.window.publishByMs)
        return ReconcileJob(requestID: request.requestID, program: request.program, issuer: job.program.issuer, wallet: request.wallet,
                            kind: request.kind, cardID: request.card.id, deviceRef: ReconcileQuery.deviceRef(for: request),
                            transactionReference: request.payment?.transactionReference ?? request.paymentAction?.transactionReference,
                            windowStartMs: job.window.startMs, deadlineMs: job.window.deadlineMs, attempt: 1,
                            dueAtMs: dueAtMs,
                            firstIndeterminateAtMs: now, traceparent: job.origin.traceparent, handOver: handOver,
                            reply: job.origin.reply)
    }

    private func answerWithoutCall(_ job: ProvisioningJob, outcome: Outcome, stage: AuditStage) {
        context.audit.publish([context.audit.event(stage, job: job, status: outcome.status, code: outcome.code,
                                                   reason: AuditReason(outcome))], traceparent: job.origin.traceparent)
        let result = ProvisioningResult(request: job.request, issuer: job.program.issuer, outcome: outcome,
                                        timing: ResultTiming(window: job.window, receivedAtMs: job.origin.receivedAtMs), attempt: 1)
        deliver(result, origin: job.origin, value: job.value, job: job, reconcile: nil, startedMarker: false, issuerMayHaveBeenCalled: false)
    }

    // MARK: - 5. Delivery

    private func deliver(_ result: ProvisioningResult, origin: RecordOrigin, value: [UInt8], job: ProvisioningJob?,
                         reconcile: ReconcileJob?, startedMarker: Bool, issuerMayHaveBeenCalled: Bool, recovered: Bool = false) {
        var stamped = result
        stamped.timing.publishedAtMs = context.clock()
        let result = stamped
        let topics = context.configuration.topics
        var messages = context.replyRouting.messages(requestID: result.requestID, value: result.encodedJSON(), route: origin.reply,
                                                     headers: origin.resultHeaders)
        let resultTopic = messages[0].topic
        if let reconcile {
            messages.append(KafkaOutgoingMessage(topic: topics.reconcile, key: Array(reconcile.requestID.utf8),
                                                 value: reconcile.encodedJSON(), headers: origin.propagatedHeaders))
        }
        context.publisher.publish(messages) { [self] outcome in
            guard outcome.allDelivered else {
                context.logger.error("result could not be published; dead-lettering the request",
                                     [("partition", .integer(Int64(origin.partition.partition))), ("offset", .integer(origin.offset)),
                                      ("error", .string(outcome.lastError?.description ?? "unknown"))])
                deadLetter(value, origin: origin, code: .publishFailed,
                           reason: "the result could not be published to \(resultTopic) after \(context.configuration.publishAttempts) attempts",
                           issuerMayHaveBeenCalled: issuerMayHaveBeenCalled, requestID: result.requestID,
                           startedMarker: startedMarker)
                return
            }
            let now = context.clock()
            context.metrics.countResult(result)
            var events: [AuditEvent] = []
            if let job {
                context.metrics.endToEnd.observe(Double(max(0, now - job.window.startMs)))
                context.metrics.overhead.observe(Double(max(0, now - origin.receivedAtMs - (result.timing.issuerMs ?? 0))))
                // A miss is a result we could have published in time: the request arrived before
                // its publish-by time (one that arrives late is answered `expired` at once).
                if now > job.window.publishByMs && origin.receivedAtMs < job.window.publishByMs {
                    context.metrics.deadlineMisses.increment()
                    context.logger.warning("result acknowledged after its deadline",
                                           [("program", .string(job.request.program)), ("late_ms", .integer(now - job.window.publishByMs))])
                }
                events.append(context.audit.event(.resultPublished, job: job, status: result.status, code: result.code,
                                                  httpStatus: result.httpStatus, latencyMs: now - job.window.startMs, attempt: result.attempt))
                if reconcile != nil {
                    events.append(context.audit.event(.reconcileScheduled, job: job, status: result.status, code: result.code,
                                                      attempt: 1))
                }
            } else {
                events.append(context.audit.event(.resultPublished, origin: origin, requestID: result.requestID, program: result.program,
                                                  issuer: result.issuer, wallet: result.wallet, status: result.status, code: result.code))
            }
            context.audit.publish(events, traceparent: origin.traceparent)
            // Every published result leaves a `completed` marker, with or without a `started` one: a
            // next owner redelivered the request before its commit ignores it instead of answering again.
            finishRecord(origin, requestID: result.requestID, completedMarker: true, outcome: recovered ? .recovered : .answered)
        }
    }

    /// Writes the `completed` marker (saying how the request was finished) when asked — for every
    /// published result, and for a dead letter after a `started` one — then completes the offset.
    /// The marker's offset counts in the commit metadata until the request is committed.
    private func finishRecord(_ origin: RecordOrigin, requestID: String?, completedMarker: Bool, outcome: CallMarker.Outcome,
                              release: Bool = false) {
        let complete: @Sendable () -> Void = { [self] in
            if let requestID {
                if release { context.duplicates.release(requestID, owner: .init(origin)) } else { context.duplicates.finish(requestID, owner: .init(origin), nowMs: context.clock()) }
            }
            context.ledger.complete(origin.partition, offset: origin.offset, generation: origin.generation)
        }
        guard completedMarker, let requestID else {
            complete()
            return
        }
        let marker = CallMarker(requestID: requestID, state: .completed, requestOffset: origin.offset, atMs: context.clock(),
                                worker: context.configuration.workerID, outcome: outcome, replayOf: origin.replayOf)
        context.ledger.markerWriting(origin.partition, requestOffset: origin.offset, generation: origin.generation)
        context.fencing.writing(origin.partition.partition)
        context.publisher.publish([marker.message(topic: context.configuration.topics.markers, partition: origin.partition.partition)]) { [self] outcome in
            context.fencing.written(origin.partition.partition, offset: outcome.reports.first??.offset)
            context.ledger.markerWritten(origin.partition, requestOffset: origin.offset,
                                         markerOffset: outcome.reports.first??.offset, generation: origin.generation)
            if outcome.allDelivered && marker.outcome != .deadLettered {
                context.horizon.record(requestID, in: origin.partition, answeredAtMs: marker.atMs, nowMs: context.clock())
            }
            if !outcome.allDelivered {
                context.logger.warning("completed marker not written; a redelivery would reconcile instead of ignoring",
                                       [("error", .string(outcome.lastError?.description ?? "unknown"))])
            }
            complete()
        }
    }

    /// Neither the result nor the dead letter could be written (the producer failed for good):
    /// the offset is given up, never completed, so the next owner or a restart redoes the request.
    private func notAcknowledged(_ origin: RecordOrigin, requestID: String?, error: KafkaError?) {
        context.logger.error("neither result nor dead letter acknowledged: the offset is not completed and will be redelivered",
                             [("partition", .integer(Int64(origin.partition.partition))), ("offset", .integer(origin.offset)),
                              ("error", .string(error?.description ?? "unknown"))])
        if let requestID { context.duplicates.release(requestID, owner: .init(origin)) }
        context.ledger.abandon(origin.partition, offset: origin.offset, generation: origin.generation)
    }

    private static func reason(for code: DeadLetterCode) -> AuditReason {
        if let cause = DeadLetterCause.Code(rawValue: code.rawValue) { return AuditReason(cause) }
        switch code {
        case .publishFailed: return AuditReason("publish_failed")
        case .reconcileExhausted: return AuditReason("reconcile_exhausted")
        case .invalidReplayOf: return AuditReason("invalid_replay_of")
        default: return AuditReason("invalid_reconcile_job")
        }
    }

    /// What a message's value says of itself for its dead letter (request id, program, wallet, deadline).
    private func summary(of value: [UInt8], origin: RecordOrigin) -> DeadLetterSummary {
        DeadLetterSummary(value: value, recordTimestampMs: origin.timestampMs, deadlines: context.configuration.deadlines)
    }

    /// Header of a dead letter whose value was cut to the request limit: the original length in bytes.
    static let truncatedFromHeader = "dlq.value_truncated_from"

    /// Dead-letters a message (or parks it when it was already a replay) and completes its offset
    /// once the dead letter is acknowledged; retried until it is.
    /// `summary`: what the value says of itself, when the caller already read it (read here otherwise).
    func deadLetter(_ value: [UInt8], origin: RecordOrigin, code: DeadLetterCode, reason: String, summary: DeadLetterSummary? = nil,
                    issuerMayHaveBeenCalled: Bool, requestID: String?, claimsRequestID: Bool = true, startedMarker: Bool = false) {
        let summary = summary ?? self.summary(of: value, origin: origin)
        let now = context.clock()
        let parked = origin.replayOf != nil
        let topics = context.configuration.topics
        let verdict = DeadLetterReplayPolicy.verdict(code: code, summary: summary, issuerMayHaveBeenCalled: issuerMayHaveBeenCalled, nowMs: now)
        var body = value
        // An Apple Pay request past its deadline can never succeed, nor can an over-size message:
        // both lose the Apple handshake. Redaction parses the whole value: an over-size one is past
        // the request limit by definition.
        let oversize = code == DeadLetterCode(.oversize)
        if summary.isExpiredApplePay(nowMs: now) || oversize,
           let stripped = RequestRedaction.strippingAppleHandshake(
               value, limits: RequestLimits(maxBytes: max(value.count, context.requestLimits.maxBytes), maxDepth: context.requestLimits.maxDepth)) {
            body = stripped
        }
        // An over-size message cannot always be written back whole: past the producer's (or the
        // broker's) record limit the write fails on every attempt, and a dead letter that is never
        // written holds its partition's commits back forever. Keep its head (the request limit's
        // worth) and say how long it was.
        var truncation: [KafkaHeader] = []
        if oversize, body.count > context.requestLimits.maxBytes {
            truncation.append(KafkaHeader(key: Self.truncatedFromHeader, string: String(value.count)))
            body = Array(body.prefix(context.requestLimits.maxBytes))
        }
        let provenance = DeadLetterProvenance(
            originalTopic: origin.partition.topic, originalPartition: origin.partition.partition, originalOffset: origin.offset,
            originalTimestampMs: origin.timestampMs, code: code, reason: reason, attempts: 1, firstFailedAtMs: origin.receivedAtMs,
            failedAtMs: now, worker: context.configuration.workerID, group: context.configuration.groupID,
            isReplayable: parked ? false : verdict.isReplayable,
            replayableReason: parked ? "a replay that failed again: parked so it cannot loop; inspect it before sending a new request" : verdict.reason)
        // The reply headers stay with the dead letter: `dlq replay` sends them again, so the
        // replay's answer goes where the original's would have.
        var headers = origin.propagatedHeaders + ReplyRouting.headers(origin.reply) + provenance.headers + truncation
        if let replayOf = origin.replayOf { headers.append(KafkaHeader(key: DeadLetterHeader.replayOf, string: replayOf)) }
        let message = KafkaOutgoingMessage(topic: parked ? topics.parked : topics.deadLetters, key: origin.key, value: body, headers: headers)
        context.publisher.publish([message], attempts: .max) { [self] outcome in
            guard outcome.allDelivered else { return notAcknowledged(origin, requestID: requestID, error: outcome.lastError) }
            context.metrics.countDeadLetter(code: code.rawValue, parked: parked)
            context.logger.warning(parked ? "replayed message failed again: parked" : "message dead-lettered",
                                   [("code", .string(code.rawValue)), ("partition", .integer(Int64(origin.partition.partition))),
                                    ("offset", .integer(origin.offset)), ("replayable", .bool(provenance.isReplayable))])
            context.audit.publish([context.audit.event(.deadLettered, origin: origin, requestID: requestID ?? summary.requestID,
                                                       program: summary.program, issuer: nil, wallet: summary.wallet,
                                                       reason: Self.reason(for: code))],
                                  traceparent: origin.traceparent)
            // Only an attempt that claimed the request id in the duplicate filter releases it: a
            // malformed or unauthentic message naming another request's id must not free that one.
            finishRecord(origin, requestID: claimsRequestID ? requestID : nil, completedMarker: startedMarker, outcome: .deadLettered, release: true)
        }
    }
}
