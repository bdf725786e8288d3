import Contract
import Kafka
import Recovery

/// The third stage: a result (with a reconciliation job when the answer was lost) or a dead
/// letter is published; once Kafka acknowledged it, `Settler.settle` does the bookkeeping.
extension RequestFlow {
    /// Publishes an answer; on acknowledgement settles its record, and when it cannot be written
    /// dead-letters the request instead. A final after a `started` marker of this attempt, or an
    /// answer without a call, is decided first (`FinalDecider`): the result published is then the
    /// request's first decision, this one or an earlier one.
    func deliver(_ answer: Answer) {
        var answer = answer
        answer.result.timing.publishedAtMs = context.clock()
        let encoded = answer.result.encodedJSON()
        let origin = answer.origin
        guard let job = answer.job, answer.result.isFinal, answer.reconcile == nil, answer.route != .recovered,
              !context.mutations.finalsUndecided else {
            return publish(answer, encoded: encoded, decided: false)
        }
        // Fencing reads a gap for as long as it takes (the markers may be unreadable for a while):
        // a final is never published unchecked; the worker stopping withdraws it (the decision is in the log).
        let deadlineMs = Int64.max
        // A decision is written until Kafka acknowledges it, like the `completed` marker: a final
        // published without one could contradict the decision another owner writes meanwhile.
        let write: (CallMarker, @escaping @Sendable (Settler.MarkerWrite) -> Void) -> Void = { [markers] marker, completion in
            markers.write(marker, for: origin, attempts: .max, completion: completion)
        }
        let given = answer
        guard let started = job.startedMarker else {
            // No fence of this generation: the partition was given up while the answer was made
            // (a revoke's drain ended first). Published undecided, it could contradict the next
            // owner's answer (a `started` marker whose write timed out may be in the log, which that
            // owner reconciles); the next owner answers the request instead.
            guard let epoch = context.fencing.epoch(origin.partition.partition, generation: origin.generation) else {
                if context.mutations.answerAfterGiveUp { return publish(answer, encoded: encoded, decided: false) }
                logger(for: origin).notice("partition given up before this answer was decided: not published here; the next owner answers the request")
                return abandon(answer)
            }
            let decision = CallMarker(job.identity, state: .completed, requestOffset: origin.offset, atMs: context.clock(),
                                      worker: context.configuration.workerID, outcome: .answeredWithoutCall, replayOf: origin.replayOf,
                                      fence: epoch.offset, instance: context.fencing.instance, stamp: epoch.stamp, result: encoded)
            context.decider.decideWithoutCall(decision, partition: origin.partition.partition, epoch: epoch.offset, deadlineMs: deadlineMs,
                                              write: write) { [self] verdict in
                switch verdict {
                case .withdrawn:
                    logger(for: origin).warning("a newer owner fenced this partition: this answer is withdrawn, the new owner answers the request")
                    abandon(given)
                case .undecided:
                    logger(for: origin).error("the decision could not be written (the producer failed for good): not published here; the next owner answers the request")
                    abandon(given)
                case .own, .earlier, .unreadable:
                    publish(given, encoded: encoded, decided: true)
                }
            }
            return
        }
        let decision = CallMarker(job.identity, state: .completed, requestOffset: origin.offset, atMs: context.clock(),
                                  worker: context.configuration.workerID, outcome: .answered, replayOf: origin.replayOf, result: encoded)
        context.decider.decideAsCaller(decision, partition: origin.partition.partition, startedAt: started.offset, epoch: started.epoch,
                                       deadlineMs: deadlineMs, write: write) { [self] verdict in
            switch verdict {
            case .withdrawn, .unreadable:
                logger(for: origin).warning("the decision could not be checked against the markers before the worker stopped: not published here; the next owner publishes the first decision")
                abandon(given)
            case .own:
                publish(given, encoded: encoded, decided: true)
            case .earlier(let bytes):
                logger(for: origin).warning("another attempt decided this request's final first: its result is published, not this attempt's")
                var earlier = given
                if let decoded = try? ProvisioningResult.decode(bytes) { earlier.result = decoded }
                publish(earlier, encoded: bytes, decided: true)
            case .undecided:
                logger(for: origin).error("the decision could not be written (the producer failed for good): not published here; the next owner publishes the first decision or reconciles")
                abandon(given)
            }
        }
    }

    /// Gives an answer up unpublished: the next owner answers the request.
    private func abandon(_ answer: Answer) {
        settler.settle(.abandoned, origin: answer.origin, identity: answer.result.identity, claimed: answer.claimed)
    }

    /// Publishes an answer's encoded result (`decided`: its decision marker is already written, so
    /// settlement only follows it with a "published" marker it does not wait for); on
    /// acknowledgement settles the record.
    func publish(_ answer: Answer, encoded: [UInt8], decided: Bool) {
        let origin = answer.origin, result = answer.result
        var messages = context.replyRouting.messages(requestID: result.requestID, value: encoded, route: origin.reply,
                                                     headers: origin.resultHeaders)
        let resultTopic = messages[0].topic
        let job = answer.reconcile.map {
            KafkaOutgoingMessage(topic: context.configuration.topics.reconcile, key: Array($0.requestID.utf8),
                                 value: $0.encodedJSON(), headers: origin.propagatedHeaders)
        }
        if let job { messages.append(job) }
        context.publisher.publish(messages) { [self] outcome in
            // The answer is the result record (the first); a mirror copy or the reconciliation job
            // that failed does not dead-letter a request whose answer was delivered.
            if case .some(.some) = outcome.reports.first, !outcome.allDelivered {
                let jobDelivered = if job != nil, case .some(.none) = outcome.reports.last { false } else { true }
                return delivered(answer, job: job, jobDelivered: jobDelivered, decided: decided, error: outcome.lastError)
            }
            guard outcome.allDelivered else {
                logger(for: origin).error("result could not be published; dead-lettering the request",
                                          [("error", .string(outcome.lastError?.description ?? "unknown"))])
                if decided, let identity = result.identity {
                    context.markerIndex.decidedUnpublished(CallMarker.key(identity, replayOf: origin.replayOf), encoded: encoded, in: origin.partition)
                }
                deadLetter(answer.value, origin: origin, code: .publishFailed,
                           reason: "the result could not be published to \(resultTopic) after \(context.configuration.publishAttempts) attempts",
                           answer: answer, decided: decided)
                return
            }
            published(result, origin: origin, job: answer.job, reconcileScheduled: answer.reconcile != nil)
            settler.settle(answer.exit(decided: decided), origin: origin, identity: result.identity, claimed: answer.claimed)
        }
    }

    /// The result was delivered but a mirror copy or the reconciliation job was not: a mirror is
    /// counted and logged; the job (which the interim answer needs for its final) is sent again
    /// until it is acknowledged, and the record is settled only then (abandoned when the producer
    /// failed for good: the next owner reconciles from the `started` marker).
    private func delivered(_ answer: Answer, job: KafkaOutgoingMessage?, jobDelivered: Bool, decided: Bool, error: KafkaError?) {
        let origin = answer.origin, result = answer.result
        let exit = answer.exit(decided: decided)
        guard !jobDelivered, let job else {
            logger(for: origin).warning("the result was delivered but its mirror copy on the default results topic was not",
                                        [("error", .string(error?.description ?? "unknown"))])
            published(result, origin: origin, job: answer.job, reconcileScheduled: job != nil)
            return settler.settle(exit, origin: origin, identity: result.identity, claimed: answer.claimed)
        }
        logger(for: origin).warning("the result was delivered but its reconciliation job was not: the job is sent again",
                                    [("error", .string(error?.description ?? "unknown"))])
        context.publisher.publish([job], attempts: .max) { [self] outcome in
            guard outcome.allDelivered else { return abandon(answer) }
            published(result, origin: origin, job: answer.job, reconcileScheduled: true)
            settler.settle(exit, origin: origin, identity: result.identity, claimed: answer.claimed)
        }
    }

    /// Metrics, the deadline check and the audit events of a result Kafka acknowledged.
    private func published(_ result: ProvisioningResult, origin: RecordOrigin, job: ProvisioningJob?, reconcileScheduled: Bool) {
        let now = context.clock()
        context.metrics.countResult(result)
        guard let job else {
            context.audit.publish([context.audit.event(.resultPublished, origin: origin, requestID: result.requestID, program: result.program,
                                                       issuer: result.issuer, wallet: result.wallet, status: result.status, code: result.code)],
                                  traceparent: origin.traceparent)
            return
        }
        traceAnswered(job, result: result, nowMs: now)
        context.metrics.endToEnd.observe(Double(max(0, now - job.window.startMs)))
        context.metrics.overhead.observe(Double(max(0, now - origin.receivedAtMs - (result.timing.issuerMs ?? 0))))
        // A miss is a result we could have published in time: the request arrived before its
        // publish-by time (one that arrives late is answered `expired` at once).
        if now > job.window.publishByMs && origin.receivedAtMs < job.window.publishByMs {
            context.metrics.deadlineMisses.increment()
            context.logger.warning("result acknowledged after its deadline",
                                   [("program", .string(job.request.program)), ("late_ms", .integer(now - job.window.publishByMs))])
        }
        var events = [context.audit.event(.resultPublished, job: job, status: result.status, code: result.code,
                                          httpStatus: result.httpStatus, latencyMs: now - job.window.startMs, attempt: result.attempt)]
        if reconcileScheduled {
            events.append(context.audit.event(.reconcileScheduled, job: job, status: result.status, code: result.code, attempt: 1))
        }
        context.audit.publish(events, traceparent: origin.traceparent)
    }

    /// Dead-letters a message (or parks it when it was already a replay) and settles it once the
    /// dead letter is acknowledged (retried until it is; abandoned when the producer failed for
    /// good; given up when the cluster refuses the letter itself for good: `giveUp`).
    /// `summary`: what the value says of itself, when the caller already read it (read here otherwise).
    /// `answer`: the answer that could not be published (nil when the message was not admitted:
    /// nothing claimed, no call; its audit event names the request id the value carries);
    /// `decided`: that answer's decision was written (no `completed` marker is owed then).
    func deadLetter(_ value: [UInt8], origin: RecordOrigin, code: DeadLetterCode, reason: String, summary: DeadLetterSummary? = nil,
                    answer: Answer? = nil, decided: Bool = false) {
        let issuerMayHaveBeenCalled = answer?.issuerMayHaveBeenCalled ?? false
        let identity = answer?.result.identity, claimed = answer?.claimed ?? false
        let startedMarker = (answer?.afterStartedMarker ?? false) && !decided
        let summary = summary ?? DeadLetterSummary(value: value, recordTimestampMs: origin.timestampMs, deadlines: context.configuration.deadlines)
        let now = context.clock()
        let verdict = DeadLetterReplayPolicy.verdict(code: code, summary: summary, issuerMayHaveBeenCalled: issuerMayHaveBeenCalled, nowMs: now)
        let bounds = intake.recordBounds
        let oversize = code == DeadLetterCode(.oversize) ? origin.oversize(value: value, bounds: bounds) : nil
        let body = DeadLetterBuilder.body(key: origin.key, value: value, summary: summary, oversize: oversize, bounds: bounds,
                                          limits: context.requestLimits, nowMs: now)
        // The reply headers stay with the dead letter as the message carried them: `dlq replay`
        // sends them again, so the replay is routed, or refused, as the original was (an early
        // rejection's own answer went to the default topic, its route refused).
        let replyHeaders = context.mutations.deadLetterCheckedRoute ? Self.checkedRouteHeaders(origin.reply)
            : origin.headers.filter { ReplyRoute.headerNames.contains($0.key) }
        let letter = deadLetters.letter(
            key: body.key, value: body.value, headers: origin.propagatedHeaders + replyHeaders + body.headers,
            source: .init(partition: origin.partition, offset: origin.offset, timestampMs: origin.timestampMs),
            code: code, reason: reason, attempts: 1, firstFailedAtMs: origin.receivedAtMs, nowMs: now, replayOf: origin.replayOf,
            replay: verdict, parkedReason: "a replay that failed again: parked so it cannot loop; inspect it before sending a new request")
        context.publisher.publish([letter.message], attempts: .max, untilRefused: true) { [self] outcome in
            guard outcome.allDelivered else {
                if let error = outcome.lastError, let refusal = error.refusal {
                    return giveUp(letter, refusal: refusal, error: error, origin: origin, identity: identity, claimed: claimed,
                                  startedMarker: startedMarker)
                }
                logger(for: origin).error("neither result nor dead letter acknowledged: the offset is not completed and will be redelivered",
                                          [("error", .string(outcome.lastError?.description ?? "unknown"))])
                return settler.settle(.abandoned, origin: origin, identity: identity, claimed: claimed)
            }
            context.metrics.countDeadLetter(code: code.rawValue, parked: letter.isParked)
            logger(for: origin).warning(letter.isParked ? "replayed message failed again: parked" : "message dead-lettered",
                                        [("code", .string(code.rawValue)), ("replayable", .bool(letter.provenance.isReplayable))])
            context.audit.publish([context.audit.event(.deadLettered, origin: origin, requestID: identity?.requestID ?? summary.requestID,
                                                       program: summary.program, issuer: nil, wallet: summary.wallet,
                                                       reason: code.auditReason)],
                                  traceparent: origin.traceparent)
            settler.settle(.deadLettered(afterStartedMarker: startedMarker), origin: origin, identity: identity, claimed: claimed)
        }
    }

    /// The reply headers of a route as intake checked it (`CoreMutations.deadLetterCheckedRoute` only).
    static func checkedRouteHeaders(_ route: ReplyRoute?) -> [KafkaHeader] {
        (route?.requestHeaders ?? []).map { KafkaHeader(key: $0.name, value: $0.value) }
    }

    /// A dead letter the cluster refuses for good (too large for the topic or the producer, not
    /// authorized, invalid): sending it again can never succeed, and a letter retried for ever
    /// would hold its partition's commits at this offset for good. It is given up: counted
    /// (`provisioner_dead_letters_given_up_total`), logged as an error with where the record was
    /// read and why (an alert), and settled like a dead letter, so the offset completes and the
    /// partition's commits go on. The record is then neither answered nor dead-lettered: the log
    /// line and the metric are all that is left of it.
    private func giveUp(_ letter: DeadLetterBuilder.Letter, refusal: KafkaError.Refusal, error: KafkaError, origin: RecordOrigin,
                        identity: RequestIdentity?, claimed: Bool, startedMarker: Bool) {
        context.metrics.countDeadLetterGivenUp(refusal: refusal)
        let headerBytes: Int = letter.message.headers.reduce(0) { total, header in total + header.key.utf8.count + (header.value?.count ?? 0) }
        let bytes: Int = (letter.message.key?.count ?? 0) + (letter.message.value?.count ?? 0) + headerBytes
        logger(for: origin).error("dead letter refused by the cluster for good: given up, the offset completes without it",
                                  [("code", .string(letter.provenance.code.rawValue)), ("refusal", .string(refusal.rawValue)),
                                   ("letter_bytes", .integer(Int64(bytes))), ("topic", .string(letter.message.topic)),
                                   ("error", .string(error.description))])
        settler.settle(.deadLettered(afterStartedMarker: startedMarker), origin: origin, identity: identity, claimed: claimed)
    }
}
