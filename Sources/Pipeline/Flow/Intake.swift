import Contract
import Issuers
import Recovery

/// The first stage of a request's life, as a decision: record bounds → decode → authenticity → `x-replay-of` →
/// reply route (the program's allowed topics) → program → signature requirement → duplicate
/// filter and markers → validation → call building → admission, in that order, produce one
/// `IntakeDecision`. It publishes nothing and touches no
/// broker: `RequestFlow` carries the decision out. What it consults is in memory (the duplicate
/// filter, the marker index and duplicate horizon filled by catch-up, the nonce guard), and time
/// is passed in, so `IntakeTests` run it like `WorkScheduler`'s.
///
/// Two steps have effects, both on in-memory state and both part of the decision: the duplicate
/// filter's claim (`DuplicateFilter.begin`) and validation's nonce check (`NonceGuard`), which
/// records the nonce. Authenticity comes before both: an unauthentic message claims nothing. Both
/// are keyed by the request's identity (program, request id), so a message can claim only its own
/// program's request; what is rejected before the claim is answered on the default results
/// topic, never along a reply route (`earlyRejectionRoute`).
struct Intake: Sendable {
    let configuration: WorkerConfiguration
    /// Issuer endpoint per program name.
    let endpoints: [String: IssuerEndpoint]
    let authenticator: RequestAuthenticator
    let replyRouting: ReplyRouting
    let requestLimits: RequestLimits
    let validator: RequestValidator
    let nonceGuard: NonceGuard
    let pseudonymizer: Pseudonymizer
    let duplicates: DuplicateFilter
    let markerIndex: MarkerIndex
    let horizon: DuplicateHorizon
    /// Builds and checks the issuer call (`IssuerClient.prepare`).
    let prepare: @Sendable (ProvisioningRequest, IssuerEndpoint) throws(IssuerRequestError) -> PreparedCall
    /// The bounds a record is held to before anything else (the consumer's own).
    var recordBounds = RecordBounds.Incoming.requests

    /// What to do with the record `value` received as `received`; the returned origin carries
    /// the checked reply route (the program's `reply_topics`). `whenOlderAttemptEnds` runs when a
    /// decision was `awaitOlderAttempt` and the attempt holding the identity ends (to decide again).
    func decide(_ value: [UInt8], received: RecordOrigin, nowMs: Int64,
                whenOlderAttemptEnds: @escaping @Sendable () -> Void) -> (RecordOrigin, IntakeDecision) {
        var origin = received
        let decision = decide(value, origin: &origin, nowMs: nowMs, whenOlderAttemptEnds: whenOlderAttemptEnds)
        return (origin, decision)
    }

    private func decide(_ value: [UInt8], origin: inout RecordOrigin, nowMs: Int64,
                        whenOlderAttemptEnds: @escaping @Sendable () -> Void) -> IntakeDecision {
        // Bounds before anything else, the signature check included: a record over them is a
        // dead letter of its sizes and digest, whoever signed it (its signature is not even read).
        if let oversize = origin.oversize(value: value, bounds: recordBounds) {
            let reason = recordBounds.problem(keyBytes: oversize.keyBytes, valueBytes: oversize.valueBytes,
                                              headerCount: oversize.headerCount, headerBytes: oversize.headerBytes)
            return .deadLetter(code: DeadLetterCode(.oversize), reason: reason ?? "the record is over its bounds", summary: nil)
        }
        let decoding = RequestDecoder.decode(value, limits: requestLimits)
        // What a message that does not decode says of itself, read once (its dead letter's summary).
        let summary: DeadLetterSummary? = if case .deadLetter = decoding {
            DeadLetterSummary(value: value, recordTimestampMs: origin.timestampMs, deadlines: configuration.deadlines)
        } else { nil }
        // Authenticity before anything that can publish a result or touch the duplicate filter,
        // markers or nonce guard, and before any header is judged (a malformed `x-replay-of` on a
        // forgery is a forgery: `unauthenticated`, not `invalid_replay_of`): a message that fails it
        // is never answered (CONTRACT section 11).
        let claimed: (requestID: String?, program: String?) = switch decoding {
        case .decoded(let request): (request.requestID, request.program)
        case .rejected(let rejection): (rejection.requestID, rejection.program)
        case .deadLetter: (summary?.requestID, summary?.program)
        }
        let verdict = authenticator.verdict(program: claimed.program,
                                            isConfigured: claimed.program.map { configuration.program($0) != nil } ?? false,
                                            key: origin.key, value: value, headers: origin.headers,
                                            partition: origin.partition.partition, nowMs: nowMs)
        if case .unauthentic(let reason) = verdict {
            return .refuseUnauthentic(reason: reason, requestID: claimed.requestID, program: claimed.program, summary: summary)
        }
        if let problem = origin.replayOfProblem {
            return .deadLetter(code: .invalidReplayOf, reason: problem, summary: nil)
        }
        (origin.reply, origin.replyRefusal) = replyRouting.check(origin.replyHeaders, program: claimed.program)
        switch decoding {
        case .deadLetter(let cause):
            return .deadLetter(code: DeadLetterCode(cause.code), reason: cause.message, summary: summary)
        case .rejected(let rejection):
            origin.reply = Self.earlyRejectionRoute(origin.reply, verdict: verdict)
            return .rejectMalformed(rejection)
        case .decoded(let request):
            let replayBy: String? = if case .authentic(let replayBy) = verdict { replayBy } else { nil }
            let decision = admit(request, value: value, origin: origin, replayBy: replayBy, nowMs: nowMs, whenOlderAttemptEnds: whenOlderAttemptEnds)
            if case .rejectEarly = decision { origin.reply = Self.earlyRejectionRoute(origin.reply, verdict: verdict) }
            return decision
        }
    }

    /// Where an early rejection (`rejectMalformed`, `rejectEarly`: nothing claimed) is answered
    /// (CONTRACT section 12): never along a reply route, which the message may have copied from
    /// another request (the headers travel in clear), but on the default results topic; with the
    /// message's correlation id only when its signature verified (the id is then its producer's own).
    static func earlyRejectionRoute(_ route: ReplyRoute?, verdict: RequestAuthenticator.Verdict) -> ReplyRoute? {
        guard case .authentic = verdict, let correlation = route?.correlationID else { return nil }
        return ReplyRoute(topic: nil, correlationID: correlation)
    }

    private func admit(_ request: ProvisioningRequest, value: [UInt8], origin: RecordOrigin, replayBy: String?, nowMs: Int64,
                       whenOlderAttemptEnds: @escaping @Sendable () -> Void) -> IntakeDecision {
        let configured = configuration.program(request.program)
        let subject = IntakeDecision.Subject(request: request, issuer: configured?.issuer,
                                             cardRef: pseudonymizer.cardRef(request.card.id),
                                             deviceRef: pseudonymizer.deviceRef(for: request))
        // Reply headers covered by the signature (checked already) but malformed or naming a topic
        // not allowed: refused on the default results topic, before anything else is touched.
        if let refusal = origin.replyRefusal {
            return .rejectEarly(subject, code: .invalidRequest, message: refusal)
        }
        guard let program = configured, let endpoint = endpoints[request.program] else {
            return .rejectEarly(subject, code: .unknownProgram,
                                message: "program '\(AuditEvent.safeIdentifier(request.program))' is not configured on this worker")
        }
        if authenticator.requiresSignature(request.program) && request.startedAtMs == nil {
            return .rejectEarly(subject, code: .invalidRequest, message: "started_at is required: program '\(request.program)' signs its requests")
        }
        // A payment action spends a capability (the authorization's link) with the program's key:
        // only a program whose requests are signed may ask for one.
        if request.kind == .paymentAction && !authenticator.requiresSignature(request.program) {
            return .rejectEarly(subject, code: .invalidRequest,
                                message: "payment_action is accepted only from a program with request_signing; program '\(request.program)' "
                                    + "does not sign its requests: configure request_signing for it and sign its payment actions")
        }
        // Held by another delivery (an older generation of this partition that may still give
        // up): decide again when that attempt ends.
        let identity = RequestIdentity(request)
        let duplicate = duplicates.begin(identity, owner: .init(origin), nowMs: nowMs, whenSettled: whenOlderAttemptEnds)
        if duplicate == .awaitingOlderAttempt { return .awaitOlderAttempt }
        let marker = markerIndex.state(identity, replayOf: origin.replayOf, in: origin.partition)
        let window = configuration.deadlines.window(for: request, recordTimestampMs: origin.timestampMs, receivedAtMs: origin.receivedAtMs)
        let job = ProvisioningJob(origin: origin, value: value, request: request, program: program, endpoint: endpoint,
                                  window: window, cardRef: subject.cardRef, deviceRef: subject.deviceRef)
        // A `completed` marker means an earlier attempt finished — answered, or dead-lettered. An
        // operator's replay (`x-replay-of`) of a dead letter has markers of its own (keyed by the
        // dead letter too): the original's `completed` does not make it a duplicate, and its own
        // `started` makes a redelivery after a crash reconcile instead of calling again.
        // Answered within the duplicate horizon (this worker, an earlier owner, or before a
        // restart: catch-up read the `completed` markers back from the horizon). An operator's
        // replay is judged by its own markers only, as above — when the replay key verified it
        // (`replayBy`): an `x-replay-of` anyone can add to a copy of an unsigned program's
        // answered request does not take it past the horizon to the issuer again.
        let authorisedReplay = origin.replayOf != nil && replayBy != nil
        let answeredBefore = duplicate == .fresh && marker != .completed && !authorisedReplay
            && horizon.contains(identity, in: origin.partition, nowMs: nowMs)
        // A decided final is published again unless the previous owner's commit said its record
        // was done (its result acknowledged): then it is a duplicate like any answered one.
        if duplicate == .fresh, marker == .completed, !markerIndex.wasDone(origin.offset, in: origin.partition),
           let encoded = markerIndex.decision(identity, replayOf: origin.replayOf, in: origin.partition),
           let decided = try? ProvisioningResult.decode(encoded) {
            return .republish(job, result: decided, encoded: encoded)
        }
        // An operator's replay re-runs a request that ended in a dead letter, and only such a
        // request: one that has a final after all (decided, its publish failed: published now as
        // decided; answered and published, by this record's copy or another: a duplicate) or a
        // call started and not completed is never sent to the issuer again with the same handshake.
        if authorisedReplay, duplicate == .fresh, marker != .completed {
            if let encoded = markerIndex.decision(identity, replayOf: nil, in: origin.partition),
               let decided = try? ProvisioningResult.decode(encoded) {
                return .republish(job, result: decided, encoded: encoded)
            }
            // The markers this owner read say nothing of the original when its catch-up started
            // after it (a later assignment): its decision may lie before, so they are read too.
            let original = markerIndex.state(identity, replayOf: nil, in: origin.partition)
            if horizon.contains(identity, in: origin.partition, nowMs: nowMs) || original != .completed {
                return .lookUpOriginal(job, replayBy: replayBy, ownMarker: marker)
            }
        }
        if duplicate != .fresh || marker == .completed || answeredBefore {
            return .duplicate(job, inFlight: duplicate == .inFlight, claimed: duplicate == .fresh)
        }
        return proceed(job, ownMarker: marker, replayBy: replayBy, nowMs: nowMs)
    }

    /// The rest of a claimed, fresh request's admission: a recovery when its own `started` marker
    /// (`ownMarker`) is there, else validated, its call prepared and its deadline judged. Also
    /// where an operator's replay goes once the retained markers showed its original had no final
    /// and no call started (`RequestFlow.lookUpOriginal`).
    func proceed(_ job: ProvisioningJob, ownMarker marker: CallMarker.State?, replayBy: String?, nowMs: Int64) -> IntakeDecision {
        var job = job
        let request = job.request, program = job.program, window = job.window
        if marker == .started {
            job.recoveredFromMarker = true
            return .admitted(job, replayBy: replayBy, next: .recover)
        }
        if let failure = validator.validate(request, issuer: program.issuer, nonceGuard: nonceGuard, nowMs: nowMs) {
            return .admitted(job, replayBy: replayBy, next: .invalid(failure))
        }
        // Built now, so a request that cannot become a call (a payment link to another host, a
        // wallet the issuer does not take) is rejected before any marker or audit says a call started.
        do {
            job.call = try prepare(request, job.endpoint)
        } catch {
            return .admitted(job, replayBy: replayBy, next: .answer(OutcomeTable.rejection(code: error.code, message: error.message), .rejected))
        }
        let minimumBudgetMs = program.minimumBudgetMs + configuration.publishReserveMs
        if configuration.scheduler.ordering == .earliestDeadlineFirst,
           !configuration.deadlines.admit(window, nowMs: nowMs, minimumIssuerBudgetMs: minimumBudgetMs).isAdmitted {
            return .admitted(job, replayBy: replayBy, next: .answer(OutcomeTable.expiredBeforeCall(wallet: request.wallet, kind: request.kind), .expired))
        }
        return .admitted(job, replayBy: replayBy, next: .submit(minimumBudgetMs: minimumBudgetMs))
    }
}

extension Intake {
    /// The intake of a worker: its configuration, in-memory state and the secrets in use now.
    init(context: WorkerContext) {
        let secrets = context.secrets.current
        self.init(configuration: context.configuration, endpoints: secrets.endpoints, authenticator: secrets.authenticator,
                  replyRouting: context.replyRouting, requestLimits: context.requestLimits, validator: context.validator,
                  nonceGuard: context.nonceGuard, pseudonymizer: secrets.pseudonymizer, duplicates: context.duplicates,
                  markerIndex: context.markerIndex, horizon: context.horizon,
                  prepare: { (request, endpoint) throws(IssuerRequestError) in try IssuerClient.prepare(request, endpoint: endpoint) })
    }
}
