import Contract
import Kafka
import Recovery

/// Builds redacted audit events for a request and publishes them to the audit topic.
struct AuditTrail: Sendable {
    let topic: String
    let worker: String
    let publisher: OutputPublisher
    let clock: @Sendable () -> Int64

    /// An event about a request that got as far as a job.
    func event(_ stage: AuditStage, job: ProvisioningJob, status: ResultStatus? = nil, code: ErrorCode? = nil,
               httpStatus: Int? = nil, latencyMs: Int64? = nil, attempt: Int? = nil, operator: String? = nil,
               reason: AuditReason? = nil) -> AuditEvent {
        AuditEvent(requestID: job.request.requestID, stage: stage, atMs: clock(), program: job.request.program,
                   issuer: job.program.issuer, wallet: job.request.wallet, status: status, code: code, httpStatus: httpStatus,
                   latencyMs: latencyMs, attempt: attempt, partition: job.origin.partition.partition, offset: job.origin.offset,
                   worker: worker, cardRef: job.cardRef, deviceRef: job.deviceRef, last4: job.request.card.last4, operator: `operator`,
                   reason: reason)
    }

    /// An event about a message that did not become a job (rejected early, dead-lettered, duplicate).
    func event(_ stage: AuditStage, origin: RecordOrigin, requestID: String?, program: String?, issuer: IssuerKind?,
               wallet: Wallet?, status: ResultStatus? = nil, code: ErrorCode? = nil, cardRef: Pseudonym? = nil,
               deviceRef: Pseudonym? = nil, last4: CardLast4? = nil, reason: AuditReason? = nil) -> AuditEvent {
        AuditEvent(requestID: requestID, stage: stage, atMs: clock(), program: program, issuer: issuer, wallet: wallet,
                   status: status, code: code, partition: origin.partition.partition, offset: origin.offset, worker: worker,
                   cardRef: cardRef, deviceRef: deviceRef, last4: last4, reason: reason)
    }

    /// An event about a reconciliation job held from `partition` at `offset`.
    func event(_ stage: AuditStage, reconciling job: ReconcileJob, partition: TopicPartition, offset: Int64, cardRef: Pseudonym,
               status: ResultStatus?, code: ErrorCode?, attempt: Int, reason: AuditReason) -> AuditEvent {
        AuditEvent(requestID: job.requestID, stage: stage, atMs: clock(), program: job.program, issuer: job.issuer, wallet: job.wallet,
                   status: status, code: code, attempt: attempt, partition: partition.partition, offset: offset, worker: worker,
                   cardRef: cardRef, reason: reason)
    }

    /// Publishes events (retried; never holds an offset back).
    func publish(_ events: [AuditEvent], traceparent: String?) {
        publisher.publishAudit(events, topic: topic, traceparent: traceparent)
    }
}
