import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

/// Request authenticity end to end (CONTRACT section 11): `demo-imprint` is configured with
/// `request_signing` (v3, ± 5 min) and the worker holds a replay key.
extension ReliabilityTests {
    /// A running worker with `demo-imprint` signed, a collector, a producer and a request factory.
    struct SigningRig {
        let stack: EmbeddedStack
        let worker: Worker
        let registry: MetricsRegistry
        let logs: CapturingLogHandler
        let collector: ResultCollector
        let producer: KafkaProducer
        let factory: RequestFactory
        let secret: String
        let replaySecret: String

        let partitions: Int

        /// `configure` may change the worker's configuration further (with `environment` beside).
        init(partitions: Int = 3, name: String, environment extra: [String: String] = [:],
             configure: (inout WorkerConfiguration) -> Void = { _ in }) async throws {
            self.partitions = partitions
            stack = try EmbeddedStack(brokers: 1, partitions: partitions)
            secret = "imprint-signing-" + Crypto.hex(Crypto.randomBytes(16))
            replaySecret = "replay-signing-" + Crypto.hex(Crypto.randomBytes(16))
            var environment = stack.environment.merging(extra) { $1 }
            environment["RELIABILITY_IMPRINT_SIGNING"] = secret
            environment["RELIABILITY_REPLAY_SIGNING"] = replaySecret
            let configuration = try stack.configuration(groupID: UniqueName.make(name), workerID: "\(name)-w1") {
                $0.programs["demo-imprint"]?.requestSigningSecret = .environment("RELIABILITY_IMPRINT_SIGNING")
                $0.replaySigningSecret = .environment("RELIABILITY_REPLAY_SIGNING")
                configure(&$0)
            }
            logs = CapturingLogHandler()
            registry = MetricsRegistry()
            worker = try Worker(configuration: configuration, environment: environment,
                                logger: Logger(label: "worker", minimumLevel: .info, handler: logs), metrics: registry)
            try worker.start()
            let worker = self.worker
            try #require(await Waiting.until(timeoutMs: 60_000) { worker.assignedPartitionCount == partitions })
            collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
            producer = try KafkaProducer(configuration: stack.producerProperties)
            factory = try RequestFactory(devices: 1)
        }

        func stop() {
            producer.close(timeoutMs: 5_000)
            collector.stop()
            worker.shutdown()
            worker.waitUntilStopped()
            stack.stop()
        }

        /// v3 headers for `request` signed with `key` (the program's secret by default) at `atMs`, for
        /// the partition murmur2 of its key picks.
        func signed(_ request: GeneratedRequest, with key: String? = nil, atMs: Int64 = Timestamps.nowMs(),
                    headers: [KafkaHeader] = []) -> [KafkaHeader] {
            RequestSigner(secret: Sensitive(key ?? secret)).signed(key: request.key, value: request.value, headers: headers,
                                                                   partition: RequestPartitioner.partition(key: request.key, count: partitions),
                                                                   nowMs: atMs)
        }

        /// Sends `request` with `headers` (and `key`, if given) to `partition`, else to the one its
        /// `x-request-partition` header names when it has one, as a signing producer does.
        func send(_ request: GeneratedRequest, headers: [KafkaHeader], key: [UInt8]?? = nil, partition: Int32? = nil) throws {
            let named = headers.last { $0.key == RequestSignature.partitionHeader }?.value.flatMap { Int32(String(decoding: $0, as: UTF8.self)) }
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: key ?? request.key, value: request.value,
                                                   headers: headers, partition: partition ?? named)) { _ in }
        }

        /// Dead letters `unauthenticated` for `requestID` seen so far.
        func unauthenticatedDeadLetters(_ requestID: String, in snapshot: ResultCollector.Snapshot) -> [DeadLetterEntry] {
            snapshot.deadLetters.filter { $0.summary.requestID == requestID && $0.provenance?.code == .unauthenticated }
        }
    }

    /// Unsigned, badly signed, stale, v1 and tampered messages get no answer at all: a dead letter
    /// `unauthenticated` (not replayable), an audit event `rejected`/`unauthenticated` and a metric,
    /// no issuer call. Correctly signed ones (`RequestSigner`, `provisioner produce --sign-env`) are
    /// provisioned; other programs are unaffected, whatever signature header they carry.
    @Test("request signing v3: unauthentic messages get no answer (dead letter, audit, metric); signed ones are provisioned")
    func requestAuthenticity() async throws {
        let rig = try await SigningRig(name: "reliability-signing")
        defer { rig.stop() }
        let factory = rig.factory
        let now = Timestamps.nowMs()

        struct Case {
            var name: String; var request: GeneratedRequest; var headers: [KafkaHeader]; var key: [UInt8]?? = nil; var partition: Int32? = nil
            var accepted: Bool
        }
        var cases: [Case] = []
        func imprint(_ wallet: Wallet = .googlePay) throws -> GeneratedRequest {
            try factory.provision(program: "demo-imprint", wallet: wallet, cardID: "pm_sig_\(cases.count)", requestID: factory.requestID("sig"))
        }
        var request = try imprint()
        cases.append(Case(name: "unsigned", request: request, headers: [], accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed with another secret", request: request, headers: rig.signed(request, with: rig.secret + "x"), accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed with the replay key, not a replay", request: request, headers: rig.signed(request, with: rig.replaySecret),
                          accepted: false))
        request = try imprint()
        let other = try imprint()
        cases.append(Case(name: "signature of another request", request: request,
                          headers: rig.signed(other).filter { $0.key == RequestSignature.header }
                              + rig.signed(request).filter { $0.key == RequestSignature.timestampHeader }, accepted: false))
        request = try imprint()
        var tampered = request
        tampered.value = JSONValue.parsed(request.value).setting("card.last4", .string("0000")).bytes
        cases.append(Case(name: "signed, then the body changed", request: tampered, headers: rig.signed(request), accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed, then sent under another key", request: request, headers: rig.signed(request),
                          key: .some(Array("pm_other".utf8)), accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed, then a reply topic added", request: request,
                          headers: rig.signed(request) + [KafkaHeader(key: "kafka_replyTopic", string: "attacker.replies")], accepted: false))
        // Reply routing is signed too: the route decides where the answer goes (to the default
        // results topic's partition 0 here, so the collector sees the accepted one).
        let route = [KafkaHeader(key: ReplyRoute.topicHeader, string: rig.stack.topics.results),
                     KafkaHeader(key: ReplyRoute.partitionHeader, value: ReplyRoute.partitionBytes(0)),
                     KafkaHeader(key: ReplyRoute.correlationHeader, value: [1, 2, 3])]
        request = try imprint()
        cases.append(Case(name: "signed with reply headers", request: request, headers: rig.signed(request, headers: route), accepted: true))
        request = try imprint()
        cases.append(Case(name: "signed with reply headers, then the reply partition changed", request: request,
                          headers: rig.signed(request, headers: route)
                              + [KafkaHeader(key: ReplyRoute.partitionHeader, value: ReplyRoute.partitionBytes(1))], accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed with reply headers, then the correlation id changed", request: request,
                          headers: rig.signed(request, headers: route) + [KafkaHeader(key: ReplyRoute.correlationHeader, value: [9])],
                          accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed 10 minutes ago (stale)", request: request, headers: rig.signed(request, atMs: now - 600_000), accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed 10 minutes ahead", request: request, headers: rig.signed(request, atMs: now + 600_000), accepted: false))
        request = try imprint()
        cases.append(Case(name: "v1 signature (accept_v1 off)", request: request,
                          headers: [KafkaHeader(key: RequestSignature.header, string: RequestSignature.signV1(secret: Sensitive(rig.secret),
                                                                                                               value: request.value))],
                          accepted: false))
        request = try imprint()
        var v2 = [KafkaHeader(key: RequestSignature.timestampHeader, string: String(now))]
        v2.append(KafkaHeader(key: RequestSignature.header, string: RequestSignature.sign(.v2, secret: Sensitive(rig.secret), key: request.key,
                                                                                           timestampMs: now, value: request.value) { _ in .absent }))
        cases.append(Case(name: "v2 signature (accept_v2 off)", request: request, headers: v2, accepted: false))
        request = try imprint()
        let signedPartition = RequestPartitioner.partition(key: request.key, count: rig.partitions)
        cases.append(Case(name: "signed, copied to another partition", request: request, headers: rig.signed(request),
                          partition: (signedPartition + 1) % Int32(rig.partitions), accepted: false))
        request = try imprint()
        cases.append(Case(name: "v3 without its timestamp header", request: request,
                          headers: rig.signed(request).filter { $0.key != RequestSignature.timestampHeader }, accepted: false))
        request = try imprint()
        cases.append(Case(name: "not hex", request: request, headers: [KafkaHeader(key: RequestSignature.header, string: "v3=zz")], accepted: false))
        request = try imprint()
        cases.append(Case(name: "empty header", request: request, headers: [KafkaHeader(key: RequestSignature.header, value: [])], accepted: false))
        request = try imprint()
        cases.append(Case(name: "truncated signature", request: request,
                          headers: rig.signed(request).map { $0.key == RequestSignature.header ? KafkaHeader(key: $0.key, value: $0.value.map { Array($0.dropLast(2)) }) : $0 },
                          accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed (Google Pay)", request: request, headers: rig.signed(request), accepted: true))
        request = try imprint(.applePay)
        cases.append(Case(name: "signed (Apple Pay)", request: request, headers: rig.signed(request), accepted: true))
        request = try imprint()
        cases.append(Case(name: "signed, with a trace context beside", request: request,
                          headers: rig.signed(request) + [KafkaHeader(key: "traceparent", string: "00-\(String(repeating: "a", count: 32))-\(String(repeating: "b", count: 16))-01")],
                          accepted: true))
        request = try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_sig_dcs", requestID: factory.requestID("sig"),
                                        opcRequested: false)
        cases.append(Case(name: "other program, unsigned", request: request, headers: [], accepted: true))
        request = try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: "pm_sig_gnosis", requestID: factory.requestID("sig"))
        cases.append(Case(name: "other program, garbage signature", request: request,
                          headers: [KafkaHeader(key: RequestSignature.header, string: "v1=00")], accepted: true))
        // Authentic but without started_at: answered (it is the producer's own request), rejected.
        let noStart = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_sig_nostart", requestID: factory.requestID("sig"),
                                            omitStartedAt: true)
        for item in cases { try rig.send(item.request, headers: item.headers, key: item.key, partition: item.partition) }
        try rig.send(noStart, headers: rig.signed(noStart))

        // `provisioner produce` as a child process: with --sign-env (accepted) and without (no answer).
        var cliSigned: [GeneratedRequest] = []
        var cliUnsigned: [GeneratedRequest] = []
        for index in 0..<3 {
            cliSigned.append(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_sig_cli_\(index)",
                                                   requestID: factory.requestID("sig-cli")))
            cliUnsigned.append(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_sig_cli_u\(index)",
                                                     requestID: factory.requestID("sig-cli-unsigned")))
        }
        func produce(_ requests: [GeneratedRequest], sign: Bool) async throws -> ChildProcess.Termination {
            let input: [UInt8] = requests.reduce(into: []) { $0 += $1.value + [0x0A] }
            let process = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                           arguments: ["produce", "--bootstrap", rig.stack.bootstrapServers] + (sign ? ["--sign-env", "RELIABILITY_CLI_SECRET"] : []),
                                           environment: ["RELIABILITY_CLI_SECRET": rig.secret], standardInput: input)
            return try await process.waitForExit(timeout: .seconds(60))
        }
        #expect(try await produce(cliSigned, sign: true) == .exited(0))
        #expect(try await produce(cliUnsigned, sign: false) == .exited(0))

        let expectations = cases.map { ($0.name, $0.request, $0.accepted) }
            + cliSigned.map { ("provisioner produce --sign-env", $0, true) } + cliUnsigned.map { ("provisioner produce (unsigned)", $0, false) }
        let acceptedIDs = expectations.filter(\.2).map(\.1.requestID) + [noStart.requestID]
        let refusedIDs = expectations.filter { !$0.2 }.map(\.1.requestID)
        // A refused message's dead letter is written where its result would have been: once every
        // dead letter and every accepted answer is in, nothing more is coming for any of them.
        let complete = rig.collector.wait(timeoutMs: 60_000) { snapshot in
            acceptedIDs.allSatisfy { snapshot.final($0) != nil } && refusedIDs.allSatisfy { !rig.unauthenticatedDeadLetters($0, in: snapshot).isEmpty }
        }
        let snapshot = rig.collector.snapshot
        #expect(complete, "unanswered: \(acceptedIDs.filter { snapshot.final($0) == nil }); no dead letter: \(refusedIDs.filter { rig.unauthenticatedDeadLetters($0, in: snapshot).isEmpty })")
        var wrong: [String] = []
        var refusedAndAudited = 0
        let calledCards = Set(rig.stack.simulator.calls.map(\.cardID))
        for (name, request, accepted) in expectations {
            let card = JSONValue.parsed(request.value)["card"]?["id"]?.stringValue ?? ""
            if accepted {
                let final = snapshot.final(request.requestID)
                if final?.status != .provisioned { wrong.append("\(name): \(final?.status.rawValue ?? "no result"), expected provisioned") }
                continue
            }
            if let results = snapshot.results[request.requestID], !results.isEmpty {
                wrong.append("\(name): answered \(results.map(\.result.status.rawValue)), expected no answer at all")
            }
            if calledCards.contains(card) { wrong.append("\(name): the issuer was called") }
            let letters = rig.unauthenticatedDeadLetters(request.requestID, in: snapshot)
            if letters.count != 1 || letters.first?.provenance?.isReplayable != false {
                wrong.append("\(name): \(letters.count) unauthenticated dead letter(s), replayable \(letters.map { $0.provenance?.isReplayable ?? true })")
            }
            let audited = snapshot.audit.contains {
                $0.requestID == request.requestID && $0.stage == .rejected && $0.code == .unauthenticated && $0.program == "demo-imprint"
            }
            if audited && letters.count == 1 { refusedAndAudited += 1 } else if !audited { wrong.append("\(name): no rejected/unauthenticated audit event") }
        }
        let noStartFinal = snapshot.final(noStart.requestID)
        if noStartFinal?.status != .rejected || noStartFinal?.code != .invalidRequest {
            wrong.append("signed without started_at: \(noStartFinal?.status.rawValue ?? "no result")/\(noStartFinal?.code?.rawValue ?? "-"), expected rejected/invalid_request")
        }
        #expect(wrong.isEmpty, "\(wrong)")
        #expect(rig.registry.total("provisioner_unauthenticated_total") == Double(refusedIDs.count))
        let secrets = [rig.secret, rig.replaySecret]
        let secretLeaked = secrets.contains { secret in
            rig.logs.records.contains { record in record.fields.contains { "\($0.1)".contains(secret) } || record.message.contains(secret) }
                || snapshot.audit.contains { ($0.reason.map { "\($0)" } ?? "").contains(secret) }
                || snapshot.deadLetters.contains { entry in entry.headers.contains { String(decoding: $0.value ?? [], as: UTF8.self).contains(secret) } }
        }
        #expect(!secretLeaked, "a signing secret appeared in a log record, an audit event or a dead-letter header")
        ReliabilityReport.emit("request_signing", [
            "requests": ReliabilityReport.int(expectations.count + 1), "bad_or_missing_signatures": ReliabilityReport.int(refusedIDs.count),
            "unanswered_dead_lettered_and_audited": ReliabilityReport.int(refusedAndAudited),
            "accepted": ReliabilityReport.int(acceptedIDs.count), "misjudged": ReliabilityReport.int(wrong.count),
            "via_provisioner_produce": ReliabilityReport.int(cliSigned.count + cliUnsigned.count),
        ])
    }

    /// The high-severity forgery: messages without the key, naming a signed program's
    /// request id R — undecodable-but-named, a whole unsigned request, an unknown program, an
    /// unknown version — publish nothing for R and leave the duplicate filter alone, so the genuine
    /// signed R that follows is answered exactly once, by the issuer's answer.
    @Test("a forged message for request R publishes nothing and does not silence the genuine signed R")
    func forgedAnswerCannotSilenceGenuineRequest() async throws {
        let rig = try await SigningRig(partitions: 1, name: "reliability-forgery")
        defer { rig.stop() }
        let requestID = rig.factory.requestID("genuine")
        let genuine = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_forged_target", requestID: requestID)
        func raw(_ json: String) -> GeneratedRequest {
            var forged = genuine
            forged.value = Array(json.utf8)
            return forged
        }
        let forgeries = [
            raw(#"{"request_id":"\#(requestID)","program":"demo-imprint"}"#),
            genuine,
            raw(String(decoding: JSONValue.parsed(genuine.value).setting("program", .string("no-such-program")).bytes, as: UTF8.self)),
            raw(#"{"version":2,"request_id":"\#(requestID)","program":"demo-imprint"}"#),
        ]
        for forged in forgeries { try rig.send(forged, headers: []) }
        let refused = rig.collector.wait(timeoutMs: 60_000) { rig.unauthenticatedDeadLetters(requestID, in: $0).count == forgeries.count }
        #expect(refused, "dead letters: \(rig.unauthenticatedDeadLetters(requestID, in: rig.collector.snapshot).count) of \(forgeries.count)")
        #expect(rig.collector.snapshot.results[requestID] == nil, "a forgery was answered")

        try rig.send(genuine, headers: rig.signed(genuine))
        let answered = rig.collector.wait(timeoutMs: 60_000) { $0.final(requestID) != nil }
        #expect(answered, "the genuine request was never answered")
        // Anything else for R would follow its only answer on the same partition: wait for a
        // sentinel on that partition behind it.
        let sentinel = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_forged_target",
                                                 requestID: rig.factory.requestID("sentinel"))
        try rig.send(sentinel, headers: rig.signed(sentinel))
        #expect(rig.collector.wait(timeoutMs: 60_000) { $0.final(sentinel.requestID) != nil })
        let snapshot = rig.collector.snapshot
        let results = snapshot.results[requestID] ?? []
        #expect(results.count == 1 && results.first?.result.status == .provisioned,
                "results for R: \(results.map { "\($0.result.status.rawValue)/\($0.result.code?.rawValue ?? "-")" })")
        #expect(!snapshot.audit.contains { $0.requestID == requestID && $0.stage == .duplicateIgnored })
        let forgeryAudits = snapshot.audit.filter { $0.requestID == requestID && $0.stage == .rejected && $0.code == .unauthenticated }
        #expect(forgeryAudits.count == forgeries.count)
        #expect(rig.stack.simulator.calls.filter { $0.cardID == "pm_forged_target" }.count == 2)  // R and the sentinel
    }

    /// Operator replays of a signed program's dead letters: `DeadLetterReplayer` signs
    /// them with the replay key, and the worker answers them and audits the operator; the same
    /// replay unsigned, or signed with the producer's key, is refused (parked `unauthenticated`).
    @Test("replays of a signed program are accepted only when signed with the replay key, and audited with the operator")
    func replaysOfSignedProgramsUseTheReplayKey() async throws {
        let rig = try await SigningRig(partitions: 1, name: "reliability-replay-signing")
        defer { rig.stop() }
        let now = Timestamps.nowMs()
        // Dead letters as the worker writes them: through its builder, sealed (dlq.mac) with the replay key.
        let builder = DeadLetterBuilder(deadLetterTopic: rig.stack.topics.deadLetters, parkedTopic: rig.stack.topics.parked, worker: "w0",
                                        group: "g0", seal: DeadLetterSeal(key: Sensitive(rig.replaySecret)))
        func deadLetter(_ request: GeneratedRequest, offset: Int64) -> DeadLetterEntry {
            let verdict = DeadLetterReplayPolicy.verdict(code: .publishFailed, summary: DeadLetterSummary(value: request.value, recordTimestampMs: now),
                                                         issuerMayHaveBeenCalled: false, nowMs: now)
            let letter = builder.letter(key: request.key, value: request.value, headers: [],
                                        source: .init(partition: TopicPartition(topic: rig.stack.topics.requests, partition: 0), offset: offset,
                                                      timestampMs: now),
                                        code: .publishFailed, reason: "the result could not be published", attempts: 1, firstFailedAtMs: now,
                                        nowMs: now, replayOf: nil, replay: verdict, parkedReason: "")
            return DeadLetterEntry(message: KafkaMessage(topic: rig.stack.topics.deadLetters, partition: 0, offset: offset, key: request.key,
                                                         value: request.value, headers: letter.message.headers, timestampMs: now))
        }
        let requests = try (0..<3).map { index in
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_replay_sig_\(index)",
                                      requestID: rig.factory.requestID("replay-sig"))
        }
        let properties = rig.stack.producerProperties
        let topics = rig.stack.topics
        let targets: Set<String> = [topics.requests, topics.reconcile]
        func replay(_ request: GeneratedRequest, offset: Int64, key: String?) throws -> [DeadLetterReplayer.Outcome] {
            let replayer = DeadLetterReplayer(properties: properties, auditTopic: topics.audit, operatorName: "alice",
                                              replayKeys: key.map { ReplayKeyring(signer: RequestSigner(secret: Sensitive($0))) }, targetTopics: targets)
            return try replayer.replay([deadLetter(request, offset: offset)], to: nil, ratePerSecond: nil, dryRun: false,
                                       nowMs: { Timestamps.nowMs() })
        }
        #expect(try replay(requests[0], offset: 10, key: rig.replaySecret) == [.replayed(topic: topics.requests, dryRun: false)])
        // The tool refuses what it cannot check: no replay key, or a key the dead letter was not sealed with.
        guard case .refused(let keyless)? = try replay(requests[1], offset: 11, key: nil).first, case .refused(let otherKey)? =
                try replay(requests[2], offset: 12, key: rig.secret).first else {
            Issue.record("the tool replayed a dead letter it could not check")
            return
        }
        #expect(keyless.contains("no replay key") && otherKey.contains("dlq.mac does not verify"), "\(keyless) / \(otherKey)")
        // The worker still refuses such replays when they reach it some other way: unsigned, or signed with the producer's key.
        for (index, key) in [(1, nil), (2, rig.secret)] as [(Int, String?)] {
            var replayed = KafkaOutgoingMessage(topic: topics.requests, key: requests[index].key, value: requests[index].value,
                                                headers: [KafkaHeader(key: DeadLetterHeader.replayOf, string: "\(topics.deadLetters):0:\(10 + index)"),
                                                          KafkaHeader(key: DeadLetterHeader.replayOperator, string: "alice")])
            if let key { replayed = RequestSigner(secret: Sensitive(key)).signed(replayed, partitionCount: 1, nowMs: Timestamps.nowMs()) }
            _ = try await rig.producer.send(replayed)
        }

        let done = rig.collector.wait(timeoutMs: 60_000) { snapshot in
            snapshot.final(requests[0].requestID) != nil
                && requests.dropFirst().allSatisfy { request in
                    snapshot.deadLetters.contains { $0.topic == topics.parked && $0.summary.requestID == request.requestID }
                }
        }
        let snapshot = rig.collector.snapshot
        #expect(done)
        #expect(snapshot.final(requests[0].requestID)?.status == .provisioned)
        #expect(snapshot.audit.contains { $0.requestID == requests[0].requestID && $0.stage == .received && $0.operator == "alice" })
        for request in requests.dropFirst() {
            #expect(snapshot.results[request.requestID] == nil, "an unauthentic replay was answered")
            let parked = snapshot.deadLetters.filter { $0.topic == topics.parked && $0.summary.requestID == request.requestID }
            #expect(parked.map { $0.provenance?.code } == [.unauthenticated])
        }
        #expect(rig.registry.total("provisioner_unauthenticated_total", matching: ["replay": "true"]) == 2)

        // The replay is written but its audit event cannot be: the tool says so as its own
        // outcome ("replayed, not audited"), and the worker still answers the replay once.
        let unaudited = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_replay_sig_unaudited",
                                                  requestID: rig.factory.requestID("replay-sig"))
        let deniedAudit = UniqueName.make("audit-denied")
        rig.stack.cluster.setTopicError(deniedAudit, error: .topicAuthorizationFailed)
        let brokenAudit = DeadLetterReplayer(properties: properties.merging(["message.timeout.ms": "3000"]) { $1 }, auditTopic: deniedAudit,
                                             operatorName: "alice",
                                             replayKeys: ReplayKeyring(signer: RequestSigner(secret: Sensitive(rig.replaySecret))), targetTopics: targets)
        let outcomes = try brokenAudit.replay([deadLetter(unaudited, offset: 13)], to: nil, ratePerSecond: nil, dryRun: false,
                                              nowMs: { Timestamps.nowMs() })
        guard case .replayedNotAudited(let topic, _)? = outcomes.first, outcomes.count == 1 else {
            Issue.record("expected replayed-not-audited, got \(outcomes)")
            return
        }
        #expect(topic == topics.requests)
        #expect(rig.collector.wait(timeoutMs: 60_000) { $0.final(unaudited.requestID) != nil })
        #expect(rig.collector.snapshot.results[unaudited.requestID]?.count == 1)
    }
}
