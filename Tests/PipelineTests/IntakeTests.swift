import Contract
import Harness
import Issuers
import Kafka
import Recovery
import Synchronization
import Testing
import TestSupport
@testable import Pipeline

/// `Intake` as a pure decision: no broker, no issuer, time passed in. Each test feeds
/// records and the in-memory state catch-up would have filled, and checks the decision.
@Suite("Intake", .timeLimit(.minutes(2)))
struct IntakeTests {
    static let now: Int64 = 1_796_000_000_000
    static let partition = TopicPartition(topic: "provisioning.requests", partition: 2)
    static let signingSecret = Sensitive("intake-signing-secret")
    static let replaySecret = Sensitive("intake-replay-secret")

    let factory: RequestFactory
    let duplicates = DuplicateFilter(horizonMs: 60_000)
    let markerIndex = MarkerIndex()
    let horizon = DuplicateHorizon(horizonMs: 60_000, maxBytes: 1 << 20, shares: [:])
    let nonceGuard = NonceGuard()
    /// How many calls intake built.
    let prepared = Count()

    init() throws {
        factory = try RequestFactory(devices: 1)
    }

    /// An intake with programs `open` (unsigned) and `signed` (signing required unless `signing`
    /// is false), both Imprint. While one program signs, a message naming no configured program
    /// (or none at all) must be signed with a key this worker holds.
    func intake(prepareFails: Bool = false, signing: Bool = true, replayKey: Bool = false,
                adjust: (inout WorkerConfiguration) -> Void = { _ in }) -> Intake {
        var configuration = WorkerConfiguration(workerID: "intake-test")
        var endpoints: [String: IssuerEndpoint] = [:]
        for name in ["open", "signed"] {
            configuration.programs[name] = ProgramConfiguration(name: name, issuer: .imprint, baseURL: "http://127.0.0.1:1",
                                                                apiKey: .environment("UNUSED"))
            endpoints[name] = IssuerEndpoint(program: name, kind: .imprint, baseURL: "http://127.0.0.1:1",
                                             credentials: IssuerCredentials(apiKey: Sensitive("k")))
        }
        adjust(&configuration)
        let prepared = self.prepared
        return Intake(configuration: configuration, endpoints: endpoints,
                      authenticator: RequestAuthenticator(programs: signing ? ["signed": .init(secret: Self.signingSecret, policy: .init())] : [:],
                                                          replaySecret: replayKey ? Self.replaySecret : nil),
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
        let headers = signed(request)
        let decision = decide(intake(), request.value, origin(key: request.key, headers: headers, value: request.value))
        guard case .admitted(_, _, .submit) = decision else { Issue.record("got \(decision)"); return }
    }

    /// A signed request's identity holds group-wide: its byte copy read from another partition (one
    /// another worker may own, whose duplicate filter and markers never saw it) is unauthentic
    /// before it claims anything; the copy read from the signed partition is judged as before.
    @Test("a byte copy of a signed request read from another partition is refused unauthentic and claims nothing")
    func signedCopyOnAnotherPartitionIsRefused() throws {
        let request = try request(program: "signed")
        let headers = signed(request)
        let intake = intake()
        for partition in [Int32(0), 1, 3, 5] {
            let copy = RecordOrigin(message: KafkaMessage(topic: Self.partition.topic, partition: partition, offset: 7, key: request.key,
                                                          value: request.value, headers: headers, timestampMs: Self.now),
                                    generation: 1, receivedAtMs: Self.now)
            guard case .refuseUnauthentic(let reason, request.requestID, "signed", _) = decide(intake, request.value, copy) else {
                Issue.record("the copy on partition \(partition) was not refused")
                continue
            }
            #expect(reason.contains("signed for partition \(Self.partition.partition) and read from partition \(partition)"), "\(reason)")
        }
        #expect(duplicates.count == 0, "a refused copy claimed the identity")
        let decision = decide(intake, request.value, origin(key: request.key, headers: headers, value: request.value))
        guard case .admitted(_, _, .submit) = decision else { Issue.record("the genuine request after the copies: \(decision)"); return }
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
        horizon.install(Self.partition, readThrough: 0)
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

    @Test("a record over its bounds (key, value, header count, header bytes) is dead-lettered oversize before its signature is read, claiming nothing")
    func boundsBeforeSignature() throws {
        let bounds = RecordBounds.Incoming.requests
        let request = try request(program: "signed")
        let signedHeaders = signed(request)
        let cases: [(name: String, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader])] = [
            ("value", request.key, request.value + [UInt8](repeating: 0x20, count: bounds.maxValueBytes), signedHeaders),
            ("key", [UInt8](repeating: 1, count: bounds.maxKeyBytes + 1), request.value, signedHeaders),
            ("header count", request.key, request.value, signedHeaders + (0...bounds.maxHeaderCount).map { KafkaHeader(key: "x\($0)", value: nil) }),
            ("header bytes", request.key, request.value, signedHeaders + [KafkaHeader(key: "x", value: [UInt8](repeating: 2, count: bounds.maxHeaderBytes))]),
        ]
        for item in cases {
            // Unsigned or signed alike: the bounds come first (an unsigned one would otherwise be `unauthenticated`).
            for headers in [item.headers, item.headers.filter { !signedHeaders.contains($0) }] {
                let decision = decide(intake(), item.value, origin(key: item.key, headers: headers, value: item.value))
                guard case .deadLetter(let code, let reason, nil) = decision else { Issue.record("\(item.name): got \(decision)"); continue }
                #expect(code == DeadLetterCode(.oversize), "\(item.name)")
                #expect(reason.hasPrefix("the record has ") && !reason.contains(request.requestID), "\(item.name): \(reason)")
            }
        }
        // As the consumer delivers one (sizes and digest only): the same decision.
        let measured = KafkaMessage(topic: Self.partition.topic, partition: Self.partition.partition, offset: 9, key: nil, value: [],
                                    oversize: KafkaMessage.Oversize(keyBytes: 1_000_000, valueBytes: 3, headerCount: 0, headerBytes: 0,
                                                                    valueDigest: Crypto.sha256(Array("abc".utf8))))
        let decision = decide(intake(), [], RecordOrigin(message: measured, generation: 1, receivedAtMs: Self.now))
        guard case .deadLetter(DeadLetterCode(.oversize), let reason, nil) = decision else { Issue.record("got \(decision)"); return }
        #expect(reason.contains("a key of 1000000 bytes (at most \(bounds.maxKeyBytes))"), "\(reason)")
        #expect(duplicates.begin(request.identity, owner: owner(), nowMs: Self.now) == .fresh)
        #expect(prepared.value == 0)
    }
}

/// A request's identity is (program, request id), and only what claimed an identity can
/// finish it or be answered along a reply route.
extension IntakeTests {
    /// `request` as a message of `program` (and `requestID`): the same handshake and reply key,
    /// as a keyless producer copying it from the requests topic would send it.
    func copy(_ request: GeneratedRequest, program: String, requestID: String? = nil) throws -> GeneratedRequest {
        var copy = request
        var document = try JSONParser().parse(request.value).setting("program", .string(program))
        if let requestID { document = document.setting("request_id", .string(requestID)) }
        copy.value = JSONWriter.encode(document)
        copy.program = program
        copy.requestID = requestID ?? request.requestID
        return copy
    }

    func signed(_ request: GeneratedRequest, headers: [KafkaHeader] = [], with secret: Sensitive = signingSecret) -> [KafkaHeader] {
        RequestSigner(secret: secret).signed(key: request.key, value: request.value, headers: headers, partition: Self.partition.partition,
                                             nowMs: Self.now)
    }

    @Test("another program's copy of a request (same id, same Apple nonce) claims nothing of it: the genuine signed request is admitted, its nonce fresh")
    func anotherProgramsCopyClaimsNothing() throws {
        let intake = intake()
        let genuine = try factory.provision(program: "signed", wallet: .applePay, cardID: "pm_intake", startedAtMs: Self.now)
        // Same id, other program: admitted as the open program's own request (it claims that one).
        let sameID = try copy(genuine, program: "open")
        let decision = decide(intake, sameID.value, origin(offset: 3, key: sameID.key, value: sameID.value))
        guard case .admitted(let copied, _, .submit) = decision else { Issue.record("the open copy: \(decision)"); return }
        #expect(copied.identity == sameID.identity)
        // Another id, same program, same nonce: reused within the open program.
        let otherID = try copy(genuine, program: "open", requestID: "forged-other-id")
        guard case .admitted(_, _, .invalid(let failure)) = decide(intake, otherID.value, origin(offset: 4, key: otherID.key, value: otherID.value)),
              failure.code == .nonceReused else { Issue.record("the open program's second use of the nonce was not refused"); return }
        let genuineDecision = decide(intake, genuine.value, origin(offset: 5, key: genuine.key, headers: signed(genuine), value: genuine.value))
        guard case .admitted(let job, nil, .submit) = genuineDecision else {
            Issue.record("the genuine signed request was not admitted for a call (duplicate, or its nonce spent): \(genuineDecision)"); return
        }
        #expect(job.identity == RequestIdentity(program: "signed", requestID: genuine.requestID))
        // The open copy's claim and the signed request's are apart.
        #expect(duplicates.begin(genuine.identity, owner: owner(), nowMs: Self.now) == .inFlight)
        #expect(duplicates.begin(RequestIdentity(program: "open", requestID: genuine.requestID), owner: owner(), nowMs: Self.now) == .inFlight)
    }

    @Test("another program's answer in the duplicate horizon or markers says nothing of this program's request with the same id")
    func anotherProgramsAnswerIsNotThisOnes() throws {
        let genuine = try request(program: "signed")
        let openSame = RequestIdentity(program: "open", requestID: genuine.requestID)
        horizon.install(Self.partition, readThrough: 0)
        horizon.record(openSame, in: Self.partition, answeredAtMs: Self.now - 500, nowMs: Self.now)
        var found = InheritedMarkers()
        found.add(CallMarker(openSame, state: .started, requestOffset: 1, atMs: Self.now - 900, worker: "old"), at: 1)
        found.add(CallMarker(openSame, state: .completed, requestOffset: 1, atMs: Self.now - 800, worker: "old", outcome: .answered,
                             result: Array("{}".utf8)), at: 2)
        markerIndex.expect(Self.partition, generation: 1)
        #expect(markerIndex.install(Self.partition, generation: 1, found: found, readFrom: 0))
        let decision = decide(intake(), genuine.value, origin(key: genuine.key, headers: signed(genuine), value: genuine.value))
        guard case .admitted(_, _, .submit) = decision else { Issue.record("got \(decision)"); return }
        // The open program's own copy is its duplicate.
        let open = try copy(genuine, program: "open")
        guard case .duplicate(_, inFlight: false, claimed: true) = decide(intake(), open.value, origin(offset: 9, value: open.value)) else {
            Issue.record("the open program's answered request was not a duplicate"); return
        }
    }

    @Test("an earlier version's markers (no program) speak for the request id under every program: started reconciles, completed ignores")
    func markersOfEarlierVersionsSpeakForEveryProgram() throws {
        let started = try request(program: "signed")
        let completed = try request(program: "signed")
        var found = InheritedMarkers()
        found.add(CallMarker(requestID: started.requestID, program: nil, state: .started, requestOffset: 1, atMs: Self.now - 900, worker: "old"), at: 1)
        found.add(CallMarker(requestID: completed.requestID, program: nil, state: .completed, requestOffset: 2, atMs: Self.now - 900, worker: "old",
                             outcome: .answered), at: 2)
        markerIndex.expect(Self.partition, generation: 1)
        #expect(markerIndex.install(Self.partition, generation: 1, found: found, readFrom: 0))
        guard case .admitted(_, _, .recover) = decide(intake(), started.value, origin(key: started.key, headers: signed(started), value: started.value))
        else { Issue.record("an earlier version's started marker did not make a recovery"); return }
        guard case .duplicate = decide(intake(), completed.value, origin(offset: 8, key: completed.key, headers: signed(completed), value: completed.value))
        else { Issue.record("an earlier version's completed marker did not make a duplicate"); return }
        #expect(prepared.value == 0)
    }

    @Test("an early rejection is answered on the default results topic: never along the copied reply route; with the correlation id only when signed")
    func earlyRejectionsNeverFollowTheReplyRoute() throws {
        let intake = intake { $0.replyTopics = ["backend.replies"] }
        let route = [KafkaHeader(key: ReplyRoute.topicHeader, string: "backend.replies"),
                     KafkaHeader(key: ReplyRoute.partitionHeader, value: ReplyRoute.partitionBytes(3)),
                     KafkaHeader(key: ReplyRoute.correlationHeader, value: [7, 7])]
        // A keyless producer's malformed message naming request R of the open program, the route copied.
        let malformed = Array(#"{"version":1,"request_id":"r-forged","program":"open"}"#.utf8)
        let (origin, decision) = intake.decide(malformed, received: origin(headers: route, value: malformed), nowMs: Self.now) {}
        guard case .rejectMalformed = decision else { Issue.record("got \(decision)"); return }
        #expect(origin.reply == nil, "an unclaimed rejection followed the reply route \(String(describing: origin.reply))")
        // Unknown program (no program signs here).
        let unknown = try request(program: "nowhere")
        let (unknownOrigin, unknownDecision) = self.intake(signing: false) { $0.replyTopics = ["backend.replies"] }
            .decide(unknown.value, received: self.origin(headers: route, value: unknown.value), nowMs: Self.now) {}
        guard case .rejectEarly(_, .unknownProgram, _) = unknownDecision else { Issue.record("got \(unknownDecision)"); return }
        #expect(unknownOrigin.reply == nil)
        // The signing program's own request without started_at: authentic, so its correlation id is
        // its producer's own and comes back, on the default results topic.
        let noStart = try factory.provision(program: "signed", wallet: .googlePay, cardID: "pm_intake", omitStartedAt: true)
        let (signedOrigin, signedDecision) = intake.decide(noStart.value, received: self.origin(key: noStart.key, headers: signed(noStart, headers: route),
                                                                                              value: noStart.value), nowMs: Self.now) {}
        guard case .rejectEarly(_, .invalidRequest, _) = signedDecision else { Issue.record("got \(signedDecision)"); return }
        #expect(signedOrigin.reply == ReplyRoute(topic: nil, correlationID: [7, 7]))
        // An admitted request keeps its route.
        let routed = try request()
        let (routedOrigin, _) = intake.decide(routed.value, received: self.origin(headers: route, value: routed.value), nowMs: Self.now) {}
        #expect(routedOrigin.reply == ReplyRoute(topic: "backend.replies", partition: 3, correlationID: [7, 7]))
    }

    @Test("reply topics are allowed per program: a program's own list replaces results.reply_topics for it")
    func replyTopicsPerProgram() throws {
        let intake = intake {
            $0.replyTopics = ["shared.replies"]
            $0.programs["signed"]?.replyTopics = ["signed.replies"]
        }
        func decision(_ request: GeneratedRequest, topic: String, signing: Bool) -> IntakeDecision {
            let route = [KafkaHeader(key: ReplyRoute.topicHeader, string: topic)]
            return decide(intake, request.value, origin(key: request.key, headers: signing ? signed(request, headers: route) : route, value: request.value))
        }
        let open = try request()
        guard case .rejectEarly(_, .invalidRequest, let message) = decision(open, topic: "signed.replies", signing: false) else {
            Issue.record("the open program was routed to the signing program's reply topic"); return
        }
        #expect(message.contains("results.reply_topics"))
        guard case .admitted = decision(try request(), topic: "shared.replies", signing: false) else { Issue.record("shared refused"); return }
        guard case .admitted = decision(try request(program: "signed"), topic: "signed.replies", signing: true) else {
            Issue.record("the signing program's own reply topic was refused"); return
        }
        guard case .rejectEarly(_, .invalidRequest, let own) = decision(try request(program: "signed"), topic: "shared.replies", signing: true) else {
            Issue.record("the signing program was routed outside its own list"); return
        }
        #expect(own.contains("the program's reply_topics"))
    }

    @Test("x-replay-of: judged after the signature (a forgery's is unauthentic); on an unsigned program only a replay-key signature lets a copy past the horizon")
    func replayHeaderNeedsTheReplayKey() throws {
        // A malformed x-replay-of on an unsigned message naming the signing program: a forgery.
        let forged = try request(program: "signed")
        let badReplay = [KafkaHeader(key: DeadLetterHeader.replayOf, string: "not a reference")]
        guard case .refuseUnauthentic = decide(intake(replayKey: true), forged.value, origin(headers: badReplay, value: forged.value)) else {
            Issue.record("a forgery's malformed x-replay-of was judged before its signature"); return
        }
        // Answered requests of the open program (in the horizon), one copied with a made-up x-replay-of: a duplicate.
        let answered = try request()
        let dead = try request()
        horizon.install(Self.partition, readThrough: 0)
        for request in [answered, dead] { horizon.record(request.identity, in: Self.partition, answeredAtMs: Self.now - 500, nowMs: Self.now) }
        let replayOf = [KafkaHeader(key: DeadLetterHeader.replayOf, string: "provisioning.dlq:0:17")]
        let intake = intake(replayKey: true)
        let copied = decide(intake, answered.value, origin(offset: 11, headers: replayOf, value: answered.value))
        guard case .duplicate(_, inFlight: false, claimed: true) = copied else {
            Issue.record("a forged x-replay-of took an answered request past the horizon: \(copied)"); return
        }
        // The operator's replay (signed with the replay key, as dlq replay does) of a request that
        // ended in a dead letter only (its completed marker says dead-lettered): called again.
        let deadOnly = try request(), startedOnly = try request(), decidedUnpublished = try request()
        var found = InheritedMarkers()
        found.add(CallMarker(deadOnly.identity, state: .started, requestOffset: 5, atMs: Self.now - 1_500, worker: "old"), at: 2)
        found.add(CallMarker(deadOnly.identity, state: .completed, requestOffset: 5, atMs: Self.now - 1_000, worker: "old",
                             outcome: .deadLettered), at: 3)
        found.add(CallMarker(startedOnly.identity, state: .started, requestOffset: 6, atMs: Self.now - 1_000, worker: "old"), at: 4)
        found.add(CallMarker(decidedUnpublished.identity, state: .started, requestOffset: 8, atMs: Self.now - 1_000, worker: "old"), at: 5)
        markerIndex.expect(Self.partition, generation: 1)
        #expect(markerIndex.install(Self.partition, generation: 1, found: found, readFrom: 0))
        func replay(_ request: GeneratedRequest, offset: Int64) -> IntakeDecision {
            decide(intake, request.value, origin(offset: offset, key: request.key,
                                                 headers: signed(request, headers: replayOf, with: Self.replaySecret), value: request.value))
        }
        guard case .admitted(_, "unknown", .submit) = replay(deadOnly, offset: 12) else {
            Issue.record("the authorised replay of a request with no final: \(replay(deadOnly, offset: 12))"); return
        }
        // Its original answered (this copy dead-lettered, another answered, in the horizon): the
        // markers are read for whether that answer was published, never a second call.
        guard case .lookUpOriginal = replay(dead, offset: 13) else {
            Issue.record("the replay of a request answered since called again: \(replay(dead, offset: 13))"); return
        }
        // Its original's call started and was never completed: that call's answer is the request's.
        guard case .lookUpOriginal = replay(startedOnly, offset: 14) else {
            Issue.record("the replay of a request whose call is unresolved called again: \(replay(startedOnly, offset: 14))"); return
        }
        // Decided by this owner, its result not published (dead-lettered publish_failed): the
        // decision is published as decided.
        let decidedResult = ProvisioningResult(requestID: decidedUnpublished.requestID, program: "open", issuer: .imprint, wallet: .googlePay,
                                               kind: .provision, status: .provisioned, isFinal: true, code: nil, message: "decided, not published",
                                               nextAction: .none, timing: ResultTiming(receivedAtMs: Self.now - 2_000), attempt: 1)
        let encoded = decidedResult.encodedJSON()
        markerIndex.decidedUnpublished(CallMarker.key(decidedUnpublished.identity, replayOf: nil), encoded: encoded, in: Self.partition)
        guard case .republish(_, let result, encoded) = replay(decidedUnpublished, offset: 15) else {
            Issue.record("the replay of a decided request did not publish the decision: \(replay(decidedUnpublished, offset: 15))"); return
        }
        #expect(result.status == .provisioned)
        // An original the markers read here say nothing of (decided before this assignment's
        // catch-up position): the retained markers are read before anything is called.
        let unseen = try request()
        guard case .lookUpOriginal(_, "unknown", nil) = replay(unseen, offset: 16) else {
            Issue.record("the replay of a request unknown to this owner's markers was admitted unread: \(replay(unseen, offset: 16))"); return
        }
        #expect(prepared.value == 1, "only the replay of the request with no final built a call")
    }
}

/// A thread-safe counter.
final class Count: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
