import Contract
import Recovery

/// What to do with one record of a requests partition: the first stage's answer (`Intake`),
/// carried out by `RequestFlow`. Only the cases from `duplicate` on have claimed the request id
/// in the duplicate filter, so only they may finish or release it (`Settlement`).
enum IntakeDecision: Sendable {
    /// Not a request (does not decode), or a replay whose `x-replay-of` header does not parse:
    /// a dead letter, nothing claimed.
    case deadLetter(code: DeadLetterCode, reason: String, summary: DeadLetterSummary?)
    /// Failed its signature check: never answered, nothing it names is touched; an audit event,
    /// a metric and a dead letter that cannot be replayed.
    case refuseUnauthentic(reason: String, requestID: String?, program: String?, summary: DeadLetterSummary?)
    /// The decoder refused it but could read a request id: a `rejected` result.
    case rejectMalformed(RequestRejection)
    /// Decoded, but refused before anything is claimed (reply headers not allowed, a program not
    /// configured, a signing program's request without `started_at`): a `rejected` result.
    case rejectEarly(Subject, code: ErrorCode, message: String)
    /// Another delivery of this id (an older generation of the partition) holds it: intake runs
    /// again when that attempt ends (the closure given to `Intake.decide`).
    case awaitOlderAttempt
    /// Already answered or in flight: ignored (an audit event), the offset completed.
    /// `claimed`: this attempt claimed the id (to be finished at once).
    case duplicate(ProvisioningJob, inFlight: Bool, claimed: Bool)
    /// A previous attempt decided this request's final (its decision marker was read at catch-up,
    /// `FinalDecider`) and may have died before publishing it: published again exactly as decided.
    /// Claimed. `result` is `encoded` read back.
    case republish(ProvisioningJob, result: ProvisioningResult, encoded: [UInt8])
    /// An operator's replay of a request that was answered (in the duplicate horizon), has a call
    /// started, or of which the markers catch-up read say nothing: the retained markers are read
    /// for the original's first decision, published now as decided when it never was; an original
    /// with a final or a call started makes the replay a duplicate; one with neither is admitted
    /// (`Intake.proceed`, with the replay's own marker state `ownMarker`). Claimed.
    case lookUpOriginal(ProvisioningJob, replayBy: String?, ownMarker: CallMarker.State?)
    /// Claimed and made a job (its `received` event is due): what happens next.
    case admitted(ProvisioningJob, replayBy: String?, next: Admitted)

    /// A decoded request and what the audit trail may say of it.
    struct Subject: Sendable {
        let request: ProvisioningRequest
        let issuer: IssuerKind?
        let cardRef: Pseudonym?
        let deviceRef: Pseudonym?
    }

    /// The admitted job's next step.
    enum Admitted: Sendable {
        /// A previous owner's `started` marker exists: reconcile with the issuer, never call again.
        case recover
        /// Validation failed (certificates, nonce, fields): a `rejected` result.
        case invalid(ValidationFailure)
        /// Answered without a call: the call cannot be built (`rejected`), or there is no budget
        /// left for it (`expired`).
        case answer(Outcome, AuditStage)
        /// To the scheduler, with the budget a call needs (the program's minimum plus the publish reserve).
        case submit(minimumBudgetMs: Int64)
    }
}
