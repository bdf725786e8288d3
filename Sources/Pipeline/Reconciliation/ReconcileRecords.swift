import Contract
import Kafka
import Recovery

// The records a reconciliation run writes besides its audit events (`AuditTrail`): its result,
// the result's headers, its dead letters.

extension ReconcileRunner {
    /// A job read from a reconcile partition and held until it is due: where it was read (its
    /// offset completes once every output of its run is acknowledged) and the headers it came with.
    struct Held: Sendable {
        let job: ReconcileJob
        let partition: TopicPartition
        let offset: Int64
        let generation: UInt64
        let headers: [KafkaHeader]

        /// The dead letter this job replays (`x-replay-of`), when an operator replayed it.
        var replayOf: String? {
            headers.last { $0.key == DeadLetterHeader.replayOf }?.value.map { String(decoding: $0, as: UTF8.self) }
        }

        /// Headers of the job's result: the trace context and, for a replayed job, `x-replay-of`.
        var resultHeaders: [KafkaHeader] {
            job.traceHeaders + (replayOf.map { [KafkaHeader(key: DeadLetterHeader.replayOf, string: $0)] } ?? [])
        }

        /// The dead letter of the job out of attempts: its value the job again from its first tier,
        /// reply route included (a replay answers where the request asked); parked, not
        /// replayable, when the job was itself a replay (a replay that fails again never loops).
        func exhaustedDeadLetter(_ builder: DeadLetterBuilder, reason: String, nowMs: Int64) -> DeadLetterBuilder.Letter {
            var retry = job
            retry.attempt = 1
            retry.dueAtMs = 0
            let verdict = DeadLetterReplayPolicy.verdict(code: .reconcileExhausted, summary: DeadLetterSummary(value: nil, recordTimestampMs: nil),
                                                         issuerMayHaveBeenCalled: true, nowMs: nowMs)
            return builder.letter(
                key: Array(job.requestID.utf8), value: retry.encodedJSON(), headers: job.traceHeaders,
                source: .init(partition: partition, offset: offset, timestampMs: job.firstIndeterminateAtMs),
                code: .reconcileExhausted, reason: reason, attempts: job.attempt, firstFailedAtMs: job.firstIndeterminateAtMs, nowMs: nowMs,
                replayOf: replayOf, replay: verdict,
                parkedReason: "a replayed reconciliation that failed again: parked so it cannot loop; ask the device wallet or the issuer")
        }
    }

    /// A job's result along the request's reply route (checked against today's `results.reply_topics`).
    func resultMessages(_ held: Held, _ result: ProvisioningResult) -> [KafkaOutgoingMessage] {
        resultMessages(held, encoded: result.encodedJSON())
    }

    /// An encoded result (one the job made, or a decision read back) along the request's reply route.
    func resultMessages(_ held: Held, encoded: [UInt8]) -> [KafkaOutgoingMessage] {
        context.replyRouting.messages(requestID: held.job.requestID, value: encoded,
                                      route: context.replyRouting.recheck(held.job.reply, program: held.job.program), headers: held.resultHeaders)
    }

    func deadLetterRecord(_ message: KafkaMessage, generation: UInt64, reason: String) {
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        let dead = deadLetters.unreadableReconcileJob(message, reason: reason, nowMs: context.clock()).message
        context.logger.warning("reconciliation record refused: dead-lettered",
                               [("partition", .integer(Int64(message.partition))), ("offset", .integer(message.offset)),
                                ("reason", .string(reason))])
        context.publisher.publish([dead], attempts: .max) { [self] outcome in
            guard outcome.allDelivered else {
                // The producer failed for good: left uncommitted, and nobody waits for it.
                ledger.abandon(partition, offset: message.offset, generation: generation)
                return
            }
            context.metrics.countDeadLetter(code: DeadLetterCode.invalidReconcileJob.rawValue, parked: false)
            ledger.complete(partition, offset: message.offset, generation: generation)
        }
    }
}

extension ReconcileJob {
    /// The job's trace context as a record header (`traceparent`), when it has one.
    var traceHeaders: [KafkaHeader] {
        traceparent.map { [KafkaHeader(key: DeadLetterHeader.traceparent, string: $0)] } ?? []
    }
}

extension ProvisioningResult {
    /// The result of reconciliation job `job` answered with `outcome`: the request's identity,
    /// window and route from the job, one attempt after the job's.
    init(reconciled job: ReconcileJob, outcome: Outcome, payment: PaymentResult?, publishedAtMs: Int64) {
        self.init(requestID: job.requestID, program: job.program, issuer: job.issuer, wallet: job.wallet, kind: job.kind,
                  status: outcome.status, isFinal: outcome.isFinal, code: outcome.code, message: outcome.message,
                  nextAction: outcome.nextAction, payment: payment,
                  timing: ResultTiming(windowStartMs: job.windowStartMs, deadlineMs: job.deadlineMs, publishedAtMs: publishedAtMs),
                  attempt: job.attempt + 1)
    }
}

extension DeadLetterBuilder {
    /// The dead letter of a reconcile record that does not read as a job: never parked (a record
    /// that does not read has no replay header to trust), not replayable.
    func unreadableReconcileJob(_ message: KafkaMessage, reason: String, nowMs: Int64) -> Letter {
        letter(key: message.key, value: message.value, headers: [],
               source: .init(partition: TopicPartition(topic: message.topic, partition: message.partition), offset: message.offset,
                             timestampMs: message.timestampMs),
               code: .invalidReconcileJob, reason: reason, attempts: 1, firstFailedAtMs: nowMs, nowMs: nowMs, replayOf: nil,
               replay: DeadLetterReplayPolicy.verdict(code: .invalidReconcileJob, summary: DeadLetterSummary(value: nil, recordTimestampMs: nil),
                                                      issuerMayHaveBeenCalled: false, nowMs: nowMs),
               parkedReason: "")
    }
}
