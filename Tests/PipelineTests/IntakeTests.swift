import Contract
import Harness
import Issuers
import Kafka
import Recovery
import Synchronization
import Testing
@testable import Pipeline

/// `Intake` as a pure decision (issue 16): no broker, no issuer, time passed in. Each test feeds
/// records and the in-memory state catch-up would have filled, and checks the decision.
@Suite("Intake", .timeLimit(.minutes(2)))
struct IntakeTests {
    static let now: Int64 = 1_796_000_000_000
    static let partition = TopicPartition(topic: "provisioning.requests", partition: 2)
    static let signingSecret = Sensitive("intake-signing-secret")

    let factory: RequestFactory
    let duplicates = DuplicateFilter(horizonMs: 60_000)
    let markerIndex = MarkerIndex()
    let horizon = DuplicateHorizon(horizonMs: 60_000, maxEntriesPerPartition: 1_000)
    let nonceGuard = NonceGuard()
    /// How many calls intake built.
    let prepared = Count()

    init() throws {
        factory = try RequestFactory(devices: 1)
    }

    /// An intake with programs `open` (unsigned) and `signed` (signing required unless `signing`
    /// is false), both Imprint. While one program signs, a message naming no configured program
    /// (or none at all) must be signed with a key this worker holds.
    func intake(prepareFails: Bool = false, signing: Bool = true) -> Intake {
        var configuration = WorkerConfiguration(workerID: "intake-test")
        var endpoints: [String: IssuerEndpoint] = [:]
        for name in ["open", "signed"] {
            configuration.programs[name] = ProgramConfiguration(name: name, issuer: .imprint, baseURL: "http://127.0.0.1:1",
                                                                apiKeyEnvironmentVariable: "UNUSED")
            endpoints[name] = IssuerEndpoint(program: name, kind: .imprint, baseURL: "http://127.0.0.1:1",
                                             credentials: IssuerCredentials(apiKey: Sensitive("k")))
        }
        let prepared = self.prepared
        return Intake(configuration: configuration, endpoints: endpoints,
                      authenticator: RequestAuthenticator(programs: signing ? ["signed": .init(secret: Self.signingSecret, policy: .init())] : [:]),
                      replyRouting: ReplyRouting(configuration: configuration), requestLimits: RequestLimits(),
                      validator: RequestValidator(policy: ValidationPolicy(requireEncryption: true)), nonceGuard: nonceGuard,
                      pseudonymizer: Pseudonymizer(key: Array("audit-key".utf8)), duplicates: duplicates, markerIndex: markerIndex,
                      horizon: horizon,
                      prepare: { (request, endpoint) throws(IssuerRequestError) in
                          prepared.add()
                          if prepareFails { throw IssuerRequestError(code: .walletUnsupported, message: "not taken") }
                          return try IssuerClient.prepare(request, endpoint: endpoint)
                      })
    }

    func origin(offset: Int64 = 7, generation: UInt64 = 1, key: [UInt8]? = nil, headers: [KafkaHeader] = [],
                value: [UInt8]) -> RecordOrigin {
        RecordOrigin(message: KafkaMessage(topic: Self.partition.topic, partition: Self.partition.partition, offset: offset, key: key,
                                           value: value, headers: headers, timestampMs: Self.now),
                     generation: generation, receivedAtMs: Self.now)
    }

    func request(program: String = "open", encrypt: Bool = true, id: String? = nil) throws -> GeneratedRequest {
        try factory.provision(program: program, wallet: .googlePay, cardID: "pm_intake", requestID: id, startedAtMs: Self.now,
                              encrypt: encrypt)
    }

    func decide(_ intake: Intake, _ value: [UInt8], _ origin: RecordOrigin, now: Int64 = now,
                whenOlderAttemptEnds: @escaping @Sendable () -> Void = {}) -> IntakeDecision {
        intake.decide(value, received: origin, nowMs: now, whenOlderAttemptEnds: whenOlderAttemptEnds).1
    }

    func owner(generation: UInt64 = 1) -> DuplicateFilter.Owner { .init(partition: Self.partition, generation: generation) }

    @Test("a valid request is claimed, its call built, and submitted with the program's budget plus the publish reserve")
    func validRequestIsSubmitted() throws {
        let request = try request()
        let decision = decide(intake(), request.value, origin(value: request.value))
        guard case .admitted(let job, nil, .submit(let budget)) = decision else { Issue.record("got \(decision)"); return }
        #expect(budget == 500 + 200)
        #expect(job.call != nil)
        #expect(job.request.requestID == request.requestID)
        // Claimed: another delivery of this generation is a copy in flight.
        #expect(duplicates.begin(request.identity, owner: owner(), nowMs: Self.now) == .inFlight)
    }

    @Test("an unsigned message for a signing program is refused before anything is claimed or built")
    func unauthenticClaimsNothing() throws {
        let request = try request(program: "signed")
        let decision = decide(intake(), request.value, origin(key: request.key, value: request.value))
        guard case .refuseUnauthentic(_, let requestID, "signed", _) = decision else { Issue.record("got \(decision)"); return }
        #expect(requestID == request.requestID)
        // The genuine request with this id is still fresh work, and no call was built.
        #expect(duplicates.begin(request.identity, owner: owner(), nowMs: Self.now) == .fresh)
        #expect(prepared.value == 0)
    }

    @Test("a signed message for a signing program is admitted")
    func signedIsAdmitted() throws {
        let request = try request(program: "signed")
        let headers = RequestSigner(secret: Self.signingSecret).signed(key: request.key, value: request.value, headers: [], nowMs: Self.now)
        let decision = decide(intake(), request.value, origin(key: request.key, headers: headers, value: request.value))
        guard case .admitted(_, _, .submit) = decision else { Issue.record("got \(decision)"); return }
    }

    @Test("a second copy under the same delivery is a duplicate in flight that claims nothing")
    func copyInFlight() throws {
        let intake = intake()
        let request = try request()
        _ = decide(intake, request.value, origin(offset: 7, value: request.value))
        let decision = decide(intake, request.value, origin(offset: 8, value: request.value))
        guard case .duplicate(_, inFlight: true, claimed: false) = decision else { Issue.record("got \(decision)"); return }
    }

    @Test("a copy while an older generation holds the id waits, and is decided again when that attempt ends")
    func olderAttemptHoldsTheID() throws {
        let intake = intake()
        let request = try request()
        #expect(duplicates.begin(request.identity, owner: owner(generation: 1), nowMs: Self.now) == .fresh)
        let woken = Count()
        let decision = decide(intake, request.value, origin(generation: 2, value: request.value)) { woken.add() }
        guard case .awaitOlderAttempt = decision else { Issue.record("got \(decision)"); return }
        #expect(woken.value == 0)
        duplicates.release(request.identity, owner: owner(generation: 1))
        #expect(woken.value == 1)
        guard case .admitted(_, _, .submit) = decide(intake, request.value, origin(generation: 2, value: request.value)) else {
            Issue.record("not admitted after the older attempt gave up"); return
        }
    }

    @Test("a previous owner's started marker makes it a recovery, never a call")
    func startedMarkerRecovers() throws {
        let request = try request()
        var found = InheritedMarkers()
        found.add(CallMarker(request.identity, state: .started, requestOffset: 7, atMs: Self.now - 1_000, worker: "old"), at: 3)
        markerIndex.expect(Self.partition, generation: 1)
        #expect(markerIndex.install(Self.partition, generation: 1, found: found, readFrom: 0))
        let decision = decide(intake(), request.value, origin(value: request.value))
        guard case .admitted(let job, _, .recover) = decision else { Issue.record("got \(decision)"); return }
        #expect(job.recoveredFromMarker)
        #expect(prepared.value == 0)
    }

    @Test("a completed marker, or an answer within the duplicate horizon, makes it a claimed duplicate")
    func answeredBefore() throws {
        let byMarker = try request()
        var found = InheritedMarkers()
        found.add(CallMarker(byMarker.identity, state: .completed, requestOffset: 7, atMs: Self.now - 1_000, worker: "old",
                             outcome: .answered), at: 3)
        markerIndex.expect(Self.partition, generation: 1)
        #expect(markerIndex.install(Self.partition, generation: 1, found: found, readFrom: 0))
        guard case .duplicate(_, inFlight: false, claimed: true) = decide(intake(), byMarker.value, origin(value: byMarker.value)) else {
            Issue.record("a completed marker did not make a duplicate"); return
        }
        let byHorizon = try request()
        horizon.install(Self.partition, index: AnsweredIndex(maxEntries: 100))
        horizon.record(byHorizon.identity, in: Self.partition, answeredAtMs: Self.now - 500, nowMs: Self.now)
        guard case .duplicate(_, inFlight: false, claimed: true) = decide(intake(), byHorizon.value, origin(offset: 9, value: byHorizon.value)) else {
            Issue.record("an answer in the horizon did not make a duplicate"); return
        }
    }

    @Test("a decision read at catch-up is published again as decided, claimed; a completed marker without one stays a duplicate")
    func decidedIsRepublished() throws {
        let request = try request()
        let decided = ProvisioningResult(requestID: request.requestID, program: "open", issuer: .imprint, wallet: .applePay, kind: .provision,
                                         status: .provisioned, isFinal: true, code: nil, message: "decided by the previous owner",
                                         nextAction: .none, timing: ResultTiming(receivedAtMs: Self.now - 2_000), attempt: 1)
        var found = InheritedMarkers()
        found.add(CallMarker(request.identity, state: .started, requestOffset: 7, atMs: Self.now - 3_000, worker: "old"), at: 3)
        found.add(CallMarker(request.identity, state: .completed, requestOffset: 7, atMs: Self.now - 2_000, worker: "old",
                             outcome: .answered, result: decided.encodedJSON()), at: 4)
        // A later decision (a reconciler that lost the race) never replaces the first.
        found.add(CallMarker(request.identity, state: .completed, requestOffset: 7, atMs: Self.now - 1_000, worker: "late",
                             outcome: .answered, result: Array("{}".utf8)), at: 5)
        markerIndex.expect(Self.partition, generation: 1)
        #expect(markerIndex.install(Self.partition, generation: 1, found: found, readFrom: 0))
        let decision = decide(intake(), request.value, origin(value: request.value))
        guard case .republish(_, let result, let encoded) = decision else { Issue.record("got \(decision)"); return }
        #expect(encoded == decided.encodedJSON())
        #expect(result.status == .provisioned && result.message == "decided by the previous owner")
        #expect(duplicates.begin(request.identity, owner: owner(), nowMs: Self.now) == .inFlight, "the id is claimed")
        #expect(prepared.value == 0, "no call is built")
        // A decision followed by a plain completed marker was published: a redelivery is a duplicate.
        let published = try self.request()
        var both = InheritedMarkers()
        both.add(CallMarker(published.identity, state: .completed, requestOffset: 8, atMs: Self.now - 2_000, worker: "old",
                            outcome: .answered, result: decided.encodedJSON()), at: 5)
        both.add(CallMarker(published.identity, state: .completed, requestOffset: 8, atMs: Self.now - 1_900, worker: "old",
                            outcome: .answered), at: 6)
        markerIndex.expect(Self.partition, generation: 1)
        #expect(markerIndex.install(Self.partition, generation: 1, found: both, readFrom: 0))
        guard case .duplicate(_, inFlight: false, claimed: true) = decide(intake(), published.value, origin(offset: 8, value: published.value)) else {
            Issue.record("a published decision was not a duplicate"); return
        }
        // The previous owner's commit said that record was done (its result acknowledged): a duplicate.
        let done = try self.request()
        var answered = InheritedMarkers()
        answered.add(CallMarker(done.identity, state: .completed, requestOffset: 9, atMs: Self.now - 2_000, worker: "old",
                                outcome: .answered, result: decided.encodedJSON()), at: 6)
        markerIndex.expect(Self.partition, generation: 1, committed: CommitMetadata(markers: 0, done: [9...9]))
        #expect(markerIndex.install(Self.partition, generation: 1, found: answered, readFrom: 0))
        guard case .duplicate(_, inFlight: false, claimed: true) = decide(intake(), done.value, origin(offset: 9, value: done.value)) else {
            Issue.record("a done record with a decision was not a duplicate"); return
        }
    }

    @Test("a program not configured, or reply headers not allowed, are rejected before anything is claimed")
    func rejectedEarly() throws {
        let unknown = try request(program: "nowhere")
        guard case .refuseUnauthentic = decide(intake(), unknown.value, origin(value: unknown.value)) else {
            Issue.record("an unsigned message naming no configured program was answered while a program signs"); return
        }
        guard case .rejectEarly(_, .unknownProgram, _) = decide(intake(signing: false), unknown.value, origin(value: unknown.value)) else {
            Issue.record("unknown program not rejected"); return
        }
        #expect(duplicates.begin(unknown.identity, owner: owner(), nowMs: Self.now) == .fresh)
        let routed = try request()
        let headers = [KafkaHeader(key: "kafka_replyTopic", string: "somebody.elses.topic")]
        guard case .rejectEarly(_, .invalidRequest, _) = decide(intake(), routed.value, origin(headers: headers, value: routed.value)) else {
            Issue.record("a reply topic not allowed was not refused: \(decide(intake(), routed.value, origin(headers: headers, value: routed.value)))"); return
        }
        #expect(duplicates.begin(routed.identity, owner: owner(), nowMs: Self.now) == .fresh)
    }

    @Test("validation failure, a call that cannot be built, and no budget left each answer without a call")
    func answeredWithoutCall() throws {
        let unencrypted = try request(encrypt: false)
        guard case .admitted(_, _, .invalid) = decide(intake(), unencrypted.value, origin(value: unencrypted.value)) else {
            Issue.record("a request without reply.jwk passed validation"); return
        }
        let unbuildable = try request()
        guard case .admitted(_, _, .answer(let outcome, .rejected)) = decide(intake(prepareFails: true), unbuildable.value,
                                                                             origin(value: unbuildable.value)) else {
            Issue.record("a call that cannot be built was not rejected"); return
        }
        #expect(outcome.code == .walletUnsupported)
        let late = try request()
        // Past the window's publish-by time, less than the minimum budget is left.
        let window = WorkerConfiguration(workerID: "w").deadlines.windowLengthMs(kind: .provision, wallet: .googlePay)
        guard case .admitted(_, _, .answer(let expired, .expired)) = decide(intake(), late.value, origin(value: late.value),
                                                                            now: Self.now + window) else {
            Issue.record("a request without budget left was not expired"); return
        }
        #expect(expired.status == .expired)
    }

    @Test("what is not a request is a dead letter that claims nothing (refused unanswered while a program signs)")
    func notARequest() throws {
        let truncated = Array(#"{"version":1,"request_id":"r-cut","program":"nowhere""#.utf8)
        guard case .refuseUnauthentic(_, nil, nil, _) = decide(intake(), truncated, origin(value: truncated)) else {
            Issue.record("an unsigned malformed message was not refused while a program signs"); return
        }
        guard case .deadLetter(let code, _, let summary) = decide(intake(signing: false), truncated, origin(value: truncated)) else {
            Issue.record("malformed JSON was not dead-lettered"); return
        }
        #expect(code == DeadLetterCode(.notJSON))
        #expect(summary != nil)
        let request = try request()
        let forged = [KafkaHeader(key: DeadLetterHeader.replayOf, string: "not a reference")]
        guard case .deadLetter(.invalidReplayOf, _, _) = decide(intake(), request.value, origin(headers: forged, value: request.value)) else {
            Issue.record("a malformed x-replay-of was not dead-lettered: \(decide(intake(), request.value, origin(headers: forged, value: request.value)))"); return
        }
        #expect(duplicates.begin(request.identity, owner: owner(), nowMs: Self.now) == .fresh)
    }
}

/// A thread-safe counter.
final class Count: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
