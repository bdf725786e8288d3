import Contract
import Foundation
import Harness
import Kafka
import Observability
import Recovery
import Testing
import TestSupport

/// A keyless producer (Kafka only, the raw producer here) against a
/// `provisioner worker` process and the issuer simulator. `demo-imprint` signs its requests;
/// `demo-dcs` does not, so anyone who can write the requests topic may send messages naming it.
/// Whatever such a message names — the signed request's `request_id`, its Apple handshake, its
/// reply headers — it must not answer, suppress or route the signed request.
extension ReliabilityTests {
    /// A single-partition stack, a reply topic for the signed program's backend, and a worker
    /// process configured through the environment: `demo-imprint` signs; `results.reply_topics`
    /// allows the backend's reply topic; `demo-dcs` has its own `reply_topics`, which does not.
    final class IdentityRig: Sendable {
        static let replyTopic = "imprint.replies"
        let rig: ProcessGroupRig
        let secret = "identity-signing-" + Crypto.hex(Crypto.randomBytes(16))
        var collector: ResultCollector { rig.collector }
        var factory: RequestFactory { rig.factory }

        init(name: String, partitions: Int = 1) async throws {
            rig = try await ProcessGroupRig(name: name, partitions: partitions, brokers: 1)
            try #require(rig.mockCluster).createTopic(Self.replyTopic, partitions: 2, replicationFactor: 1)
        }

        /// Starts a worker process of the rig's group (with `extra` in its environment), without
        /// waiting for partitions.
        func spawn(_ name: String, environment extra: [String: String] = [:]) throws -> ChildWorker {
            try rig.worker(name, environment: [
                "RELIABILITY_IDENTITY_SIGNING": secret,
                "PROVISIONER_PROGRAMS__DEMO_IMPRINT__REQUEST_SIGNING": #"{"secret_env": "RELIABILITY_IDENTITY_SIGNING"}"#,
                "PROVISIONER_RESULTS__REPLY_TOPICS": #"["\#(Self.replyTopic)"]"#,
                "PROVISIONER_PROGRAMS__DEMO_DCS__REPLY_TOPICS": #"["dcs.replies"]"#,
            ].merging(extra) { _, new in new })
        }

        /// Starts a worker process of the rig's group (with `extra` in its environment) and waits
        /// until it owns the partition.
        func worker(_ name: String, environment extra: [String: String] = [:]) async throws -> ChildWorker {
            let worker = try spawn(name, environment: extra)
            try #require(await ChildWorker.waitForGroup([worker], partitions: 1), "the worker process did not take the partition")
            return worker
        }

        /// The genuine backend's reply route: the reply topic's partition 1 and `correlation`.
        static func route(_ correlation: [UInt8]) -> [KafkaHeader] {
            [KafkaHeader(key: ReplyRoute.topicHeader, string: replyTopic),
             KafkaHeader(key: ReplyRoute.partitionHeader, value: ReplyRoute.partitionBytes(1)),
             KafkaHeader(key: ReplyRoute.correlationHeader, value: correlation)]
        }

        /// Produces `value` under `key` with `headers` (to `partition`, else the keyed partitioner's)
        /// and waits for the broker's acknowledgement.
        func send(key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], partition: Int32? = nil) async throws {
            _ = try await rig.producer.send(KafkaOutgoingMessage(topic: rig.topics.requests, key: key, value: value, headers: headers,
                                                                 partition: partition))
        }

        /// Sends `request` signed with the program's secret, along `route`.
        func sendSigned(_ request: GeneratedRequest, route: [KafkaHeader]) async throws {
            let headers = RequestSigner(secret: Sensitive(secret)).signed(key: request.key, value: request.value, headers: route,
                                                                         partition: 0, nowMs: Timestamps.nowMs())
            try await send(key: request.key, value: request.value, headers: headers)
        }

        /// The reply topic's records now.
        func replies() async throws -> [KafkaMessage] {
            try await KafkaTestReader(bootstrapServers: rig.endpoints.bootstrapServers).readExisting(topic: Self.replyTopic)
        }

        func stop() { rig.stop() }
    }

    /// Whether `result` answers `request`: its program and request id (its identity).
    static func answers(_ result: ProvisioningResult?, _ request: GeneratedRequest) -> Bool {
        result?.program == request.program && result?.requestID == request.requestID
    }

    /// `genuine` as a keyless producer would copy it from the requests topic under the unsigned
    /// program `demo-dcs`: same request, handshake and reply key; `requestID` (default: the same)
    /// and the forger's own card, one the issuer does not know (so its call consumes no nonce).
    static func copyUnderDCS(_ genuine: GeneratedRequest, requestID: String? = nil) -> [UInt8] {
        var document = JSONValue.parsed(genuine.value).setting("program", .string("demo-dcs"))
            .setting("card.id", .string("pm_forger-missing")).setting("card.user_id", .string("pm_forger-missing"))
        if let requestID { document = document.setting("request_id", .string(requestID)) }
        return document.bytes
    }

    /// Before the genuine signed requests R1 and R2 arrive, a keyless
    /// producer sends, under the unsigned `demo-dcs`: a malformed message naming R1 with R1's
    /// reply headers copied (its answer must not reach R1's reply partition, where the victim's
    /// backend would take the forged `rejected`); R1's whole request, copied (it must not claim R1
    /// nor spend R1's Apple nonce beyond its own program, or R1 becomes `duplicate_ignored`); the
    /// copy under another id (it must not make the genuine R1 `nonce_reused`); a valid copy with
    /// R1's reply headers under the forger's own id (refused: `demo-dcs` may not name that topic);
    /// and R2's request, copied. The worker is then replaced, so only the durable horizon and the
    /// markers (keyed by program and request id) remember the copy of
    /// R2 when the genuine R2 comes. Must not happen: any answer on the victim's reply partition
    /// but the genuine ones; a genuine request not answered exactly once after its own issuer call.
    @Test("keyless producer under an unsigned program: cannot answer, suppress, spend the nonce of, or route a signed request")
    func keylessProducerCannotTouchASignedRequest() async throws {
        let rig = try await IdentityRig(name: "reliability-identity")
        defer { rig.stop() }
        let first = try await rig.worker("identity-w1")
        defer { first.process.kill() }
        let factory = rig.factory
        let g1 = try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_victim_1", requestID: factory.requestID("victim"))
        let g2 = try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_victim_2", requestID: factory.requestID("victim"))
        let c1 = Crypto.randomBytes(16)
        let c2 = Crypto.randomBytes(16)
        let forgedRoutedID = factory.requestID("forger")

        // The forgeries, all keyed like R1 (same partition), none signed.
        let malformed = Array(#"{"version":1,"request_id":"\#(g1.requestID)","program":"demo-dcs"}"#.utf8)
        try await rig.send(key: g1.key, value: malformed, headers: IdentityRig.route(c1))
        try await rig.send(key: g1.key, value: Self.copyUnderDCS(g1), headers: [])
        try await rig.send(key: g1.key, value: Self.copyUnderDCS(g1, requestID: "forged-\(g1.requestID)"), headers: [])
        try await rig.send(key: g1.key, value: Self.copyUnderDCS(g1, requestID: forgedRoutedID), headers: IdentityRig.route(c1))
        try await rig.send(key: g2.key, value: Self.copyUnderDCS(g2), headers: [])
        // The copies of R1 and R2 are answered (after a call to the issuer, which does not know the
        // forger's card): only then is R2's copy in the markers the next worker reads.
        let forgeriesAnswered = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            [g1.requestID, g2.requestID].allSatisfy { id in snapshot.results[id]?.contains { $0.result.program == "demo-dcs" && $0.result.isFinal } == true }
        }
        #expect(forgeriesAnswered, "the copies were not answered")

        try await rig.sendSigned(g1, route: IdentityRig.route(c1))
        let firstGenuine = try? await KafkaTestReader(bootstrapServers: rig.rig.endpoints.bootstrapServers)
            .read(topic: IdentityRig.replyTopic, timeout: .seconds(30)) { messages in
                messages.contains { Self.answers(try? ProvisioningResult.decode($0.value), g1) }
            }
        #expect(firstGenuine != nil, "the genuine R1 was never answered on its reply partition")

        // A new worker process: its in-memory duplicate filter is empty; what it knows of R2's copy
        // it read from the markers (catch-up and duplicate horizon).
        first.process.terminate()
        _ = try await first.process.waitForExit(timeout: .seconds(30))
        let second = try await rig.worker("identity-w2")
        defer { second.process.kill() }
        try await rig.sendSigned(g2, route: IdentityRig.route(c2))
        let secondGenuine = try? await KafkaTestReader(bootstrapServers: rig.rig.endpoints.bootstrapServers)
            .read(topic: IdentityRig.replyTopic, timeout: .seconds(30)) { messages in
                messages.contains { Self.answers(try? ProvisioningResult.decode($0.value), g2) }
            }
        #expect(secondGenuine != nil, "the genuine R2 was never answered on its reply partition after the restart")
        // A sentinel behind everything on the partition: once it is answered, nothing more is coming.
        let sentinel = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_victim_sentinel",
                                             requestID: factory.requestID("sentinel"))
        try await rig.sendSigned(sentinel, route: [])
        #expect(rig.collector.wait(timeoutMs: 30_000) { $0.final(sentinel.requestID) != nil }, "the sentinel was not answered")

        // The victim's reply partition: the two genuine answers, nothing else.
        let replies = try await rig.replies()
        let answered = replies.map { reply in
            let result = try? ProvisioningResult.decode(reply.value)
            return "\(result?.program ?? "?")/\(result?.requestID ?? "?")/\(result?.status.rawValue ?? "?")"
        }
        #expect(replies.count == 2, "the reply topic holds \(answered)")
        for (genuine, correlation) in [(g1, c1), (g2, c2)] {
            let mine = replies.filter { (try? ProvisioningResult.decode($0.value))?.requestID == genuine.requestID }
            #expect(mine.count == 1, "\(genuine.requestID): \(mine.count) answers on the reply topic: \(answered)")
            let result = try #require(mine.first.flatMap { try? ProvisioningResult.decode($0.value) })
            #expect(Self.answers(result, genuine) && result.status == .provisioned && result.isFinal,
                    "\(result.program ?? "?") \(result.status) \(result.code?.rawValue ?? "-")")
            #expect(mine.first?.partition == 1 && mine.first?.header(ReplyRoute.correlationHeader) == correlation)
            // Called once, with its own handshake (its nonce was not spent by a copy).
            let calls = rig.rig.simulator.calls.filter { $0.cardID == JSONValue.parsed(genuine.value)["card"]?["id"]?.stringValue }
            #expect(calls.map(\.count) == [1] && calls.first?.handshake == genuine.handshake, "\(genuine.requestID): calls \(calls)")
        }
        let snapshot = rig.collector.snapshot
        for genuine in [g1, g2] {
            #expect(!snapshot.audit.contains { $0.requestID == genuine.requestID && $0.program == "demo-imprint" && $0.stage == .duplicateIgnored },
                    "the genuine request was ignored as a duplicate of a copy")
            #expect(!(snapshot.results[genuine.requestID] ?? []).contains { $0.result.program == "demo-imprint" },
                    "a genuine answer went to the default results topic too")
        }
        // The forgeries got their own answers, on the default results topic, without the copied correlation id.
        let forged = [g1.requestID, "forged-\(g1.requestID)", forgedRoutedID, g2.requestID].flatMap { snapshot.results[$0] ?? [] }
        #expect(forged.count == 5 && forged.allSatisfy { $0.result.program == "demo-dcs" && $0.result.status == .rejected },
                "forged answers: \(forged.map { "\($0.result.requestID) \($0.result.status) \($0.result.code?.rawValue ?? "-")" })")
        #expect(forged.allSatisfy { $0.headers.allSatisfy { $0.key != ReplyRoute.correlationHeader } }, "a forged answer carries a correlation id")
        // What reached the issuer for the forger's card: the two whole copies (R1's, R2's), nothing else.
        let forgerCalls = rig.rig.simulator.calls.filter { $0.cardID == "pm_forger-missing" }.reduce(0) { $0 + $1.count }
        #expect(forgerCalls == 2, "issuer calls for the copies: \(forgerCalls)")
    }

    /// A captured signed request (its headers travel in clear; it names a reply
    /// topic and partition, no correlation id) re-sent while its call is in flight, with a null
    /// `kafka_correlationId` added (the issue's case: null signed like absent, so it verified, and
    /// the malformed route earned a second final), a covered header set to null, or a null
    /// `x-replay-of` added. A null header value is malformed wherever it is read, and signs as
    /// itself, not as absent: each copy fails the signature check (dead letter `unauthenticated`, no
    /// answer anywhere); re-sent unchanged it is a duplicate. Must not happen: a second final for the request (the refused route's
    /// `rejected` on the default results topic), a second issuer call.
    @Test("a captured signed request re-sent with a null covered header gets no answer; the genuine call in flight is answered once")
    func nullHeadersOnACapturedSignedRequest() async throws {
        let rig = try await IdentityRig(name: "reliability-null-headers")
        defer { rig.stop() }
        let worker = try await rig.worker("null-headers-w1")
        defer { worker.process.kill() }
        let genuine = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_null_target-slow-2000",
                                                requestID: rig.factory.requestID("captured"))
        let route = IdentityRig.route([]).filter { $0.key != ReplyRoute.correlationHeader }
        let signed = RequestSigner(secret: Sensitive(rig.secret)).signed(key: genuine.key, value: genuine.value, headers: route,
                                                                         partition: 0, nowMs: Timestamps.nowMs())
        try await rig.send(key: genuine.key, value: genuine.value, headers: signed)
        // The copies go out while the genuine call is in flight (the card answers after 2 s).
        let cardID = "pm_null_target-slow-2000"
        #expect(await Waiting.until(timeoutMs: 20_000) { rig.rig.simulator.calls.contains { $0.cardID == cardID } }, "the genuine call never started")
        func nulled(_ name: String) -> [KafkaHeader] { signed.filter { $0.key != name } + [KafkaHeader(key: name, value: nil)] }
        let nullCopies = [signed + [KafkaHeader(key: ReplyRoute.correlationHeader, value: nil)], nulled(ReplyRoute.topicHeader),
                          nulled(ReplyRoute.partitionHeader), signed + [KafkaHeader(key: DeadLetterHeader.replayOf, value: nil)]]
        for headers in nullCopies { try await rig.send(key: genuine.key, value: genuine.value, headers: headers) }
        try await rig.send(key: genuine.key, value: genuine.value, headers: signed)

        let answer = try? await KafkaTestReader(bootstrapServers: rig.rig.endpoints.bootstrapServers)
            .read(topic: IdentityRig.replyTopic, timeout: .seconds(30)) { messages in
                messages.contains { Self.answers(try? ProvisioningResult.decode($0.value), genuine) }
            }
        #expect(answer != nil, "the genuine request was never answered")
        let sentinel = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_null_sentinel",
                                                 requestID: rig.factory.requestID("sentinel"))
        try await rig.sendSigned(sentinel, route: [])
        let settled = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            snapshot.final(sentinel.requestID) != nil
                && snapshot.deadLetters.filter { $0.summary.requestID == genuine.requestID }.count == nullCopies.count
        }
        #expect(settled, "the sentinel or the copies' dead letters never came")

        let replies = try await rig.replies()
        #expect(replies.count == 1, "answers on the reply topic: \(replies.count)")
        let result = try #require(replies.first.flatMap { try? ProvisioningResult.decode($0.value) })
        #expect(Self.answers(result, genuine) && result.status == .provisioned && result.isFinal)
        #expect(replies.first?.partition == 1 && replies.first?.header(ReplyRoute.correlationHeader) == nil)
        let snapshot = rig.collector.snapshot
        let elsewhere = (snapshot.results[genuine.requestID] ?? []).map { "\($0.result.status.rawValue)/\($0.result.code?.rawValue ?? "-")" }
        #expect(elsewhere.isEmpty, "a copy was answered on the default results topic: \(elsewhere)")
        let letters = snapshot.deadLetters.filter { $0.summary.requestID == genuine.requestID }
        #expect(letters.map { $0.provenance?.code } == Array(repeating: .unauthenticated, count: nullCopies.count),
                "\(letters.map { $0.provenance?.code.rawValue ?? "-" })")
        #expect(snapshot.audit.contains { $0.requestID == genuine.requestID && $0.stage == .duplicateIgnored }, "the unchanged copy was not a duplicate")
        #expect(rig.rig.simulator.calls.filter { $0.cardID == cardID }.map(\.count) == [1], "the issuer was called more than once")
    }
}
