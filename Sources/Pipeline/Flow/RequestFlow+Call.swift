import Contract
import Issuers
import Recovery

/// The second stage: the scheduler's decisions, the `started` marker, fencing's confirmation,
/// the issuer call, and the result it yields (or a reconciliation after a previous owner's marker).
extension RequestFlow {
    /// Carries out the scheduler's decisions. They are made on whichever thread submitted a job,
    /// freed a slot or ran the scheduler's timer (a partition queue, the pool, the producer's
    /// delivery thread, the poll thread inside a rebalance callback): a start only writes its
    /// `started` marker there; an answer without a call is made on the pool, like every other.
    func carryOut(_ decisions: [SchedulerDecision<ProvisioningJob>]) {
        for decision in decisions {
            switch decision {
            case .start(let ticket, _):
                startCall(ticket.payload, ticketID: ticket.id)
            case .expire(let ticket):
                let job = ticket.payload
                let expired = OutcomeTable.expiredBeforeCall(wallet: job.request.wallet, kind: job.request.kind)
                pool.async { self.answerWithoutCall(job, outcome: expired, stage: .expired) }
            case .refuse(let ticket, let reason):
                let job = ticket.payload
                context.metrics.countRefusal(reason: reason.rawValue, program: job.request.program)
                let outcome = switch reason {
                case .breakerOpen: OutcomeTable.breakerOpen()
                case .rateLimited, .maxUnsettled: OutcomeTable.rateLimitedBeforeCall(wallet: job.request.wallet, kind: job.request.kind)
                }
                pool.async { self.answerWithoutCall(job, outcome: outcome, stage: .rejected) }
            }
        }
    }

    /// Gives a job up before its call: the slot freed, the claim released, the offset abandoned
    /// (the partition's next owner redoes the request).
    private func giveUp(_ job: ProvisioningJob, ticketID: UInt64) {
        settler.settle(.abandoned, origin: job.origin, identity: job.identity, claimed: true, slot: ticketID)
    }

    private func startCall(_ job: ProvisioningJob, ticketID: UInt64) {
        let origin = job.origin
        // Never call unfenced, nor without the call intake prepared (every submitted job has one).
        guard let prepared = job.call, context.ledger.isOwned(origin.partition, generation: origin.generation),
              let epoch = context.fencing.epoch(origin.partition.partition, generation: origin.generation) else {
            return giveUp(job, ticketID: ticketID)
        }
        let marker = CallMarker(job.identity, state: .started, requestOffset: origin.offset,
                                atMs: context.clock(), worker: context.configuration.workerID, replayOf: origin.replayOf,
                                fence: epoch.offset, instance: context.fencing.instance, stamp: epoch.stamp)
        context.markerIndex.started(marker.key, in: origin.partition)
        traceQueueWait(job, untilMs: marker.atMs)
        markers.write(marker, for: origin, attempts: 3) { [self] write in
            // A broker outage can hold the marker write for seconds, long enough to lose the
            // partition: its new owner may have read the markers without this one and will call the
            // issuer itself. Only a partition still held (owned, or draining a clean revoke) may call.
            guard context.ledger.isHeld(origin.partition, generation: origin.generation) else {
                giveUp(job, ticketID: ticketID)
                logger(for: origin).notice("partition lost while the call marker was written: the issuer is not called, the new owner redoes the request")
                return
            }
            guard write.delivered else {
                settler.releaseSlot(ticketID, success: nil)
                context.logger.error("could not write the call marker; answering without calling the issuer",
                                     [("error", .string(write.error?.description ?? "unknown"))])
                let failed = OutcomeTable.markerNotWritten(wallet: job.request.wallet, kind: job.request.kind)
                pool.async { self.answerWithoutCall(job, outcome: failed, stage: .rejected) }
                return
            }
            guard let markerOffset = write.offset else {
                // Acknowledged without an offset (not expected with acks=all): no fence can be checked against it.
                notCalledUnconfirmed(job, ticketID: ticketID)
                return
            }
            var started = job
            started.startedMarker = .init(offset: markerOffset, epoch: epoch.offset)
            started.startedAtMs = marker.atMs
            confirmFirst(started, prepared, ticketID: ticketID, epoch: epoch.offset, at: markerOffset)
        }
    }

    /// Zombie-owner fencing (`MarkerFencing`): calls only when no other process's fence lies
    /// between this owner's fence (`epoch`) and its `started` marker at `offset`; at once (no
    /// read) when every offset between is one of this process's own writes.
    private func confirmFirst(_ job: ProvisioningJob, _ prepared: PreparedCall, ticketID: UInt64, epoch: Int64, at offset: Int64) {
        let origin = job.origin
        // The last moment the call could still start with its minimum budget.
        let lastStartMs = context.configuration.scheduler.ordering == .earliestDeadlineFirst
            ? job.window.publishByMs - context.configuration.publishReserveMs - job.program.minimumBudgetMs
            : context.clock() + job.program.timeoutMs
        context.fencing.confirm(partition: origin.partition.partition, epoch: epoch, marker: offset, deadlineMs: lastStartMs) { [self] verdict in
            let confirmation = context.mutations.callWithoutFencing ? .call : verdict
            if confirmation != .call { context.metrics.markers.countFencing(confirmation) }
            switch confirmation {
            case .call:
                // On the producer's delivery thread or the fencing reader's queue: hand off, so the
                // issuer call (request building, DCS signing, the audit event) holds up neither.
                // The confirmation may have waited for a read: only a partition still held calls.
                guard context.ledger.isHeld(origin.partition, generation: origin.generation) else {
                    giveUp(job, ticketID: ticketID)
                    logger(for: origin).notice("partition lost while the call was confirmed: the issuer is not called, the new owner redoes the request")
                    return
                }
                pool.async { self.call(job, prepared, ticketID: ticketID) }
            case .fencedOut:
                // Another process's fence came first: it holds the partition and answers the
                // request (its catch-up ignores this marker); no call, no answer here.
                context.markerIndex.fencedOut(CallMarker.key(job.identity, replayOf: origin.replayOf), in: origin.partition,
                                              generation: origin.generation)
                giveUp(job, ticketID: ticketID)
                logger(for: origin).warning("a newer owner fenced this partition: the issuer is not called, the new owner redoes the request")
            case .unconfirmed:
                // The markers stayed unreadable until the call could no longer start in time, or
                // the worker is closing. A partition no longer held is its next owner's to answer.
                guard context.ledger.isHeld(origin.partition, generation: origin.generation) else {
                    return giveUp(job, ticketID: ticketID)
                }
                notCalledUnconfirmed(job, ticketID: ticketID)
            }
        }
    }

    /// Ownership could not be confirmed against the fences in time: no call, an `expired` answer.
    /// The `started` marker was written but no call followed, so the answer is decided as one
    /// without a call (its epoch in the decision): when a newer owner's fence precedes it, this
    /// process was a zombie, the answer is withdrawn and every reader ignores it, whatever that
    /// owner's own call did.
    private func notCalledUnconfirmed(_ job: ProvisioningJob, ticketID: UInt64) {
        settler.releaseSlot(ticketID, success: nil)
        let expired = OutcomeTable.ownershipUnconfirmed(wallet: job.request.wallet, kind: job.request.kind)
        var unstarted = job
        if !context.mutations.unconfirmedDecidedAsCall { unstarted.startedMarker = nil }
        let uncalled = unstarted
        pool.async { self.answerWithoutCall(uncalled, outcome: expired, stage: .expired) }
    }

    private func call(_ job: ProvisioningJob, _ prepared: PreparedCall, ticketID: UInt64) {
        let edf = context.configuration.scheduler.ordering == .earliestDeadlineFirst
        // The baseline (`fifo`) ignores deadlines and waits out the issuer's own timeout.
        // The call must end early enough to build and publish the result before publish-by.
        let publishBy = edf ? job.window.publishByMs - context.configuration.publishReserveMs : context.clock() + job.program.timeoutMs
        context.audit.publish([context.audit.event(.issuerCallStarted, job: job, attempt: 1)], traceparent: job.origin.traceparent)
        traceFencing(job)
        let completion: @Sendable (IssuerCallReport) -> Void = { [self] report in
            pool.async { self.answered(job, ticketID: ticketID, report: report) }
        }
        context.issuerClient.call(prepared, publishByMs: publishBy, trace: job.trace, completion: completion)
    }

    private func answered(_ job: ProvisioningJob, ticketID: UInt64, report: IssuerCallReport) {
        settler.releaseSlot(ticketID, success: Self.breakerVerdict(report.answer))
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
                outcome = OutcomeTable.payloadNotSealed()
            }
        }
        if let links = report.payment?.links {
            // Action links are capabilities: only the requester's key opens them.
            do {
                payload = try context.payloadSealer.seal(links, for: request)
            } catch {
                context.logger.error("could not encrypt payment links to reply.jwk", [("program", .string(request.program))])
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
        // The reconciled final is decided in the markers log from this call's `started` marker on.
        let decidedIn = job.startedMarker.map {
            ReconcileJob.MarkersPosition(markersPartition: job.origin.partition.partition, markersFrom: $0.offset,
                                         replayOf: job.origin.replayOf, requestOffset: job.origin.offset)
        }
        let reconcile = outcome.status == .indeterminate && !outcome.isFinal ? reconcileJob(for: job, decidedIn: decidedIn) : nil
        if case .transportFailure(.abandonedBeforeSend) = report.answer {
            // The budget ran out before sending: the issuer never saw it.
            deliver(Answer(result, job: job, route: .afterCall(mayHaveReachedIssuer: false)))
            return
        }
        deliver(Answer(result, job: job, route: .afterCall(mayHaveReachedIssuer: report.requestMayHaveBeenSent), reconcile: reconcile))
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

    /// A previous owner's `started` marker: an `indeterminate` answer and a reconciliation job, never a second call.
    func recoverFromMarker(_ job: ProvisioningJob) {
        let request = job.request
        let outcome = OutcomeTable.recoveringFromMarker(issuer: job.program.issuer, wallet: request.wallet, kind: request.kind)
        logger(for: job.origin).notice("redelivered request has a started call marker: reconciling instead of calling again")
        context.audit.publish([context.audit.event(.issuerTimedOut, job: job, status: outcome.status, code: outcome.code,
                                                   reason: AuditReason("worker restarted during the issuer call"))],
                              traceparent: job.origin.traceparent)
        let result = ProvisioningResult(request: request, issuer: job.program.issuer, outcome: outcome,
                                        timing: ResultTiming(window: job.window, receivedAtMs: job.origin.receivedAtMs), attempt: 1)
        // The previous owner may only have lost the partition, not died: its answer can still come.
        let handOver = ReconcileJob.MarkersPosition(markersPartition: job.origin.partition.partition,
                                             markersFrom: context.markerIndex.readFrom(job.origin.partition) ?? 0,
                                             replayOf: job.origin.replayOf, requestOffset: job.origin.offset)
        deliver(Answer(result, job: job, route: .recovered, reconcile: reconcileJob(for: job, handOver: handOver)))
    }

    private func reconcileJob(for job: ProvisioningJob, handOver: ReconcileJob.MarkersPosition? = nil,
                              decidedIn: ReconcileJob.MarkersPosition? = nil) -> ReconcileJob {
        let now = context.clock()
        let request = job.request
        // A hand-over's first look waits until the previous owner, whose call may still be under
        // way (its timeout, a Retry-After wait), can no longer answer: the request's publish-by,
        // plus the publish reserve for its decision to reach the markers log. (Whichever decision
        // comes first wins in any case: `FinalDecider`; the wait saves a query.)
        let tierDueMs = context.reconcileTiers.dueTime(attempt: 1, scheduledAtMs: now) ?? now
        let dueAtMs = handOver == nil ? tierDueMs : max(tierDueMs, job.window.publishByMs + context.configuration.publishReserveMs)
        return ReconcileJob(requestID: request.requestID, program: request.program, issuer: job.program.issuer, wallet: request.wallet,
                            kind: request.kind, cardID: request.card.id, deviceRef: ReconcileQuery.deviceRef(for: request),
                            transactionReference: request.payment?.transactionReference ?? request.paymentAction?.transactionReference,
                            windowStartMs: job.window.startMs, deadlineMs: job.window.deadlineMs, attempt: 1,
                            dueAtMs: dueAtMs,
                            firstIndeterminateAtMs: now, traceparent: job.origin.traceparent, handOver: handOver, decidedIn: decidedIn,
                            reply: job.origin.reply, handshakeRef: HandshakeReference.of(request))
    }

    /// Answers an admitted job without calling its issuer (`stage`: `rejected` or `expired`).
    func answerWithoutCall(_ job: ProvisioningJob, outcome: Outcome, stage: AuditStage) {
        context.audit.publish([context.audit.event(stage, job: job, status: outcome.status, code: outcome.code,
                                                   reason: AuditReason(outcome))], traceparent: job.origin.traceparent)
        let result = ProvisioningResult(request: job.request, issuer: job.program.issuer, outcome: outcome,
                                        timing: ResultTiming(window: job.window, receivedAtMs: job.origin.receivedAtMs), attempt: 1)
        deliver(Answer(result, job: job, route: .withoutCall))
    }

}
