import Contract
import Foundation
import Issuers
import Kafka
import Observability
import Recovery
import Synchronization

/// A reconciliation query and what comes of it: a final result, a later attempt, a hand-over
/// look at the previous owner's markers, or (out of attempts) a final `check_wallet` and a dead
/// letter; every output published before the job's offset completes.
extension ReconcileRunner {
    func reconcile(_ held: Held) {
        let job = held.job
        guard context.configuration.programs[job.program] != nil else {
            context.logger.error("reconciliation job for a program this worker does not know; dead-lettering it",
                                 [("program", .string(AuditEvent.safeIdentifier(job.program)))])
            exhausted(held, reason: "the program is not configured on this worker")
            return
        }
        // A handed-over request's previous owner may only have lost the partition and still
        // answer: its decision, if any, is the final one, for every issuer (a final is decided once).
        if let handOver = job.handOver, !context.mutations.finalsUndecided { return lookUpPreviousOwner(held, handOver: handOver) }
        query(held, previousOwnerMayAnswer: false)
    }

    /// Asks the issuer's state query (or learns it has none). `previousOwnerMayAnswer`: a
    /// handed-over job whose previous owner has not answered yet (and did not dead-letter it).
    func query(_ held: Held, previousOwnerMayAnswer: Bool) {
        let job = held.job
        guard let endpoint = context.secrets.current.endpoints[job.program] else { return exhausted(held, reason: "the program is not configured on this worker") }
        let query = ReconcileQuery(requestID: job.requestID, kind: job.kind, wallet: job.wallet, cardID: job.cardID,
                                   deviceRef: job.deviceRef, windowStartMs: job.windowStartMs, transactionReference: job.transactionReference,
                                   handshakeRef: context.mutations.reconcileByTimeOnly ? nil : job.handshakeRef)
        context.issuerClient.reconcile(query, endpoint: endpoint, publishByMs: context.clock() + endpoint.timeoutMs,
                                       trace: job.traceparent.flatMap(TraceContext.init(header:))) { [self] answer in
            context.executor.pool.async { self.answered(held, answer: answer, previousOwnerMayAnswer: previousOwnerMayAnswer) }
        }
    }

    func answered(_ held: Held, answer: ReconcileAnswer, previousOwnerMayAnswer: Bool) {
        let job = held.job
        guard !givenUpMeanwhile(held, while: "its query ran") else { return }
        let situation = ReconcileReading.Situation(
            kind: job.kind, wallet: job.wallet, attempt: job.attempt,
            applyHorizonEndsAtMs: job.callGivenUpAtMs.clampedAdding(context.configuration.reconcileApplyHorizonMs),
            nowMs: context.clock(), previousOwnerMayAnswer: previousOwnerMayAnswer,
            handOverLooks: min(Self.handOverLooks, context.reconcileTiers.maximumAttempts), mutations: context.mutations)
        switch ReconcileReading.of(answer, in: situation) {
        case .publish(let outcome, let payment, let counted):
            context.metrics.countReconcile(counted)
            publishFinal(held, outcome: outcome, payment: payment)
        case .retryLater(let reason, let counted):
            if let counted { context.metrics.countReconcile(counted) }
            retryLater(held, reason: reason)
        }
    }

    /// Whether the job's partition was lost (or released) while this run waited (`while`): then its
    /// next owner runs the job again, so this run publishes nothing more, no second final and no
    /// second retry chain, and the job is abandoned here.
    func givenUpMeanwhile(_ held: Held, while waiting: StaticString) -> Bool {
        guard !ledger.isHeld(held.partition, generation: held.generation) else { return false }
        context.logger.notice("reconciliation partition lost while the job waited: the next owner runs the job",
                              [("partition", .integer(Int64(held.partition.partition))), ("while", .string(waiting.description))])
        end(held, .abandoned)
        return true
    }

    /// A handed-over job: did the previous owner decide or answer after all?
    func lookUpPreviousOwner(_ held: Held, handOver: ReconcileJob.MarkersPosition) {
        let reader: MarkerCatchUp
        do {
            reader = try context.decider.markerReader()
        } catch {
            context.logger.error("markers cannot be read; the previous owner's answer is looked for again later",
                                 [("error", .string(error.description))])
            retryLater(held, reason: "the markers could not be read")
            return
        }
        reader.lookUp(key: CallMarker.key(held.job.identity, replayOf: handOver.replayOf),
                      partition: handOver.markersPartition, from: handOver.markersFrom) { [self] found in
            context.executor.pool.async { self.previousOwner(held, found: found) }
        }
    }

    func previousOwner(_ held: Held, found: MarkerLookUp) {
        let job = held.job
        if let decision = found.decision, !found.decisionPublished {
            // Decided already (by the previous owner, or an earlier run of this job): that result is
            // the final one. Published again as it is, since its writer may have died before it did.
            context.metrics.countReconcile("previous_owner_decided")
            return publishDecided(held, bytes: decision.result, reason: AuditReason("previous_owner_decided"))
        }
        switch found.completion {
        case .answered:
            // Answered without a decision (an interim answer with a reconciliation of its own, or a
            // worker of an earlier version): its answer stands.
            context.metrics.countReconcile("previous_owner_answered")
            context.audit.publish([auditEvent(.reconciled, held, status: nil, attempt: job.attempt,
                                              reason: AuditReason("previous_owner_answered"))], traceparent: job.traceparent)
            end(held, .completed)
        case .notFound:
            query(held, previousOwnerMayAnswer: true)
        case .deadLettered:
            // It dead-lettered the request after its call: it will not answer.
            query(held, previousOwnerMayAnswer: false)
        }
    }

    /// Schedules the job's next attempt at its tier; past the last tier it is exhausted, unless
    /// `deciding`: an exhausted job whose final could not be checked against the markers runs again
    /// after the last tier's delay, up to `decisionRetries` more times.
    func retryLater(_ held: Held, reason: StaticString, deciding: Bool = false) {
        guard !givenUpMeanwhile(held, while: reason) else { return }
        let job = held.job
        let now = context.clock()
        let tiers = context.reconcileTiers
        let due = tiers.dueTime(attempt: job.attempt + 1, scheduledAtMs: now)
            ?? (deciding && job.attempt < tiers.maximumAttempts + Self.decisionRetries ? now.clampedAdding(tiers.delaysMs.last ?? 0) : nil)
        guard let due else {
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
                end(held, .completed)
            } else {
                exhausted(held, reason: "the next reconciliation attempt could not be scheduled")
            }
        }
    }

    /// Out of attempts: a final `check_wallet` result for the backend and a dead letter for operators
    /// (`Held.exhaustedDeadLetter`). Decided through the markers log first, like every reconciled final: when another run
    /// of the job (or the previous owner) decided first, that final is published instead, and no
    /// dead letter is needed.
    /// When the final cannot be checked (the markers unreadable, the decision not written), the
    /// job runs again after the last tier's delay (`decisionRetries` times at most) instead of
    /// publishing a final that could contradict another run's; past that it is published unchecked.
    func exhausted(_ held: Held, reason: String) {
        let result = ProvisioningResult(reconciled: held.job, outcome: OutcomeTable.reconcileExhausted(), payment: nil, publishedAtMs: context.clock())
        decide(held, result) { [self] verdict in
            switch verdict {
            case .earlier(let bytes):
                context.metrics.countReconcile("previous_owner_decided")
                publishDecided(held, bytes: bytes, reason: AuditReason("previous_owner_decided"))
            case .undecided, .unreadable, .withdrawn:
                guard held.job.attempt >= context.reconcileTiers.maximumAttempts + Self.decisionRetries else {
                    return retryLater(held, reason: "the exhausted job's final could not be checked against the markers", deciding: true)
                }
                context.logger.error("an exhausted reconciliation's final could not be checked against the markers after every retry: published unchecked",
                                     [("attempts", .integer(Int64(held.job.attempt)))])
                publishExhausted(held, result: result, reason: reason)
            case nil, .own:
                publishExhausted(held, result: result, reason: reason)
            }
        }
    }

    /// The exhausted job's final and dead letter.
    /// The dead letter is sent only once the final is acknowledged: an operator who replays it
    /// then always finds the `check_wallet` final published before the replay's own.
    private func publishExhausted(_ held: Held, result: ProvisioningResult, reason: String) {
        let job = held.job
        let letter = held.exhaustedDeadLetter(deadLetters, reason: reason, nowMs: context.clock())
        let deadLettered: @Sendable (OutputPublisher.Outcome) -> Void = { [self] delivery in
            guard delivery.allDelivered else { return notAcknowledged(held, error: delivery.lastError) }
            context.metrics.countDeadLetter(code: DeadLetterCode.reconcileExhausted.rawValue, parked: letter.isParked)
            context.audit.publish([auditEvent(.deadLettered, held, status: .indeterminate, attempt: job.attempt,
                                              reason: AuditReason("reconcile_exhausted"))], traceparent: job.traceparent)
            end(held, .completed)
        }
        if context.mutations.exhaustedLetterWithFinal {
            context.metrics.countResult(result)
            return context.publisher.publish(resultMessages(held, result) + [letter.message], attempts: .max, completion: deadLettered)
        }
        context.publisher.publish(resultMessages(held, result), attempts: .max) { [self] delivery in
            guard delivery.allDelivered else { return notAcknowledged(held, error: delivery.lastError) }
            context.metrics.countResult(result)
            context.publisher.publish([letter.message], attempts: .max, completion: deadLettered)
        }
    }

    /// Publishes a reconciled final, decided first (`FinalDecider`) when the job knows where its
    /// request's markers are (every job after a call: its own creator's, or a hand-over): what is
    /// published is the request's first decision, this one or another attempt's.
    func publishFinal(_ held: Held, outcome: Outcome, payment: PaymentResult? = nil) {
        let result = ProvisioningResult(reconciled: held.job, outcome: outcome, payment: payment, publishedAtMs: context.clock())
        guard outcome.isFinal else { return publish(held, result, outcome: outcome) }
        decide(held, result) { [self] verdict in
            switch verdict {
            case nil, .own:
                publish(held, result, outcome: outcome)
            case .earlier(let bytes):
                context.metrics.countReconcile("previous_owner_decided")
                publishDecided(held, bytes: bytes, reason: AuditReason("previous_owner_decided"))
            case .undecided, .unreadable, .withdrawn:
                retryLater(held, reason: "the decision could not be checked against the markers")
            }
        }
    }

    /// Writes `result` as the request's decision in its markers partition and reads the partition
    /// from the job's position to it: `then` gets the verdict (on the pool), or nil at once when
    /// the job does not know where the markers are (a job of an earlier version) or is an
    /// operator's replay.
    private func decide(_ held: Held, _ result: ProvisioningResult, then: @escaping @Sendable (FinalDecider.Verdict?) -> Void) {
        let job = held.job
        // An operator's replay of an exhausted job (a dead letter replayed) is a new answer by
        // design (`check_wallet` before, the truth now): it is not decided against the original's.
        guard let markers = job.markers, held.replayOf == nil, !context.mutations.finalsUndecided else { return then(nil) }
        let decision = CallMarker(job.identity, state: .completed, requestOffset: markers.requestOffset ?? 0,
                                  atMs: context.clock(), worker: context.configuration.workerID, outcome: .answered,
                                  replayOf: markers.replayOf, result: result.encodedJSON())
        context.decider.decideAsReconciler(decision, partition: markers.markersPartition, from: markers.markersFrom) { [self] verdict in
            context.executor.pool.async { then(verdict) }
        }
    }

    /// Publishes a result someone decided (`bytes`, as decided) along the job's route.
    func publishDecided(_ held: Held, bytes: [UInt8], reason: AuditReason) {
        let job = held.job
        let decided = try? ProvisioningResult.decode(bytes)
        context.publisher.publish(resultMessages(held, encoded: bytes), attempts: .max) { [self] delivery in
            guard delivery.allDelivered else { return notAcknowledged(held, error: delivery.lastError) }
            if let decided { context.metrics.countResult(decided) }
            context.audit.publish([auditEvent(.reconciled, held, status: decided?.status, code: decided?.code, attempt: job.attempt,
                                              reason: reason)], traceparent: job.traceparent)
            end(held, .completed)
        }
    }

    private func publish(_ held: Held, _ result: ProvisioningResult, outcome: Outcome) {
        let job = held.job
        context.publisher.publish(resultMessages(held, result), attempts: .max) { [self] delivery in
            guard delivery.allDelivered else { return notAcknowledged(held, error: delivery.lastError) }
            context.metrics.countResult(result)
            context.audit.publish([auditEvent(.reconciled, held, status: outcome.status, code: outcome.code, attempt: job.attempt,
                                              reason: AuditReason(outcome))], traceparent: job.traceparent)
            end(held, .completed)
        }
    }

    /// The audit event of a held job (`AuditTrail`'s), its card pseudonymized with the key in use now.
    func auditEvent(_ stage: AuditStage, _ held: Held, status: ResultStatus?, code: ErrorCode? = nil, attempt: Int,
                    reason: AuditReason) -> AuditEvent {
        context.audit.event(stage, reconciling: held.job, partition: held.partition, offset: held.offset,
                            cardRef: context.secrets.current.pseudonymizer.cardRef(held.job.cardID),
                            status: status, code: code, attempt: attempt, reason: reason)
    }

    /// The job's outputs could not be written (the producer failed for good): it stays
    /// uncommitted, so it runs again after a restart.
    func notAcknowledged(_ held: Held, error: KafkaError?) {
        context.logger.error("reconciliation outputs not acknowledged: the job stays uncommitted",
                             [("error", .string(error?.description ?? "unknown"))])
        end(held, .abandoned)
    }

    /// How a run of a job ends: its offset completed (committable), or abandoned (left
    /// uncommitted: the partition's next owner, or a restart, runs the job again).
    enum RunEnd {
        case completed
        case abandoned
    }

    /// The one exit of every run: its running slot freed, its offset completed or abandoned, and
    /// the jobs that fell due meanwhile started (the timer is not armed while every slot runs).
    func end(_ held: Held, _ how: RunEnd) {
        state.withLock { $0.running -= 1 }
        switch how {
        case .completed: ledger.complete(held.partition, offset: held.offset, generation: held.generation)
        case .abandoned: ledger.abandon(held.partition, offset: held.offset, generation: held.generation)
        }
        runDue()
    }
}
