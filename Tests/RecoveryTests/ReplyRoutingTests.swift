import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

/// Reply routing (CONTRACT section 11) end to end: Spring Kafka's request-reply headers on real
/// requests, a real worker on the embedded broker, results read back from the reply topic.
@Suite("Reply routing end to end: kafka_replyTopic, kafka_replyPartition, kafka_correlationId", .serialized, .timeLimit(.minutes(10)))
struct ReplyRoutingTests {
    static let replyTopic = "backend.replies"

    /// The three reply headers for `partition` of `topic` with `correlation`.
    static func headers(topic: String = replyTopic, partition: Int32, correlation: [UInt8]) -> [KafkaHeader] {
        ReplyRoute(topic: topic, partition: partition, correlationID: correlation).requestHeaders.map { KafkaHeader(key: $0.name, value: $0.value) }
    }

    /// A rig whose cluster also has `backend.replies` (4 partitions) and a worker allowing `backend.*`.
    static func rig(adjust: @escaping (inout WorkerConfiguration) -> Void = { _ in }) throws -> (RecoveryRig, Worker) {
        let rig = try RecoveryRig()
        do {
            try rig.stack.cluster.createTopic(replyTopic, partitions: 4, replicationFactor: 1)
            let worker = try rig.startWorker(try rig.configuration { configuration in
                configuration.replyTopics = ["backend.*"]
                adjust(&configuration)
            })
            return (rig, worker)
        } catch {
            rig.stop()
            throw error
        }
    }

    static func correlation(of message: KafkaMessage) -> [UInt8]? {
        message.headers.last { $0.key == ReplyRoute.correlationHeader }?.value
    }

    @Test("a routed request's result goes to its reply topic and partition, keyed by request_id, with its correlation id; the default topic gets nothing")
    func routedResultReachesTheReplyPartition() async throws {
        let (rig, _) = try Self.rig()
        defer { rig.stop() }
        let routed = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: RecoveryTests.card())
        let plain = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: RecoveryTests.card())
        let correlation = Crypto.randomBytes(16) + [0x00, 0xFF]
        try await rig.send(routed, headers: Self.headers(partition: 2, correlation: correlation))
        try await rig.send(plain)

        let replies = try await KafkaTestReader(bootstrapServers: rig.bootstrap).read(topic: Self.replyTopic, count: 1, timeout: .seconds(60))
        try #require(replies.count == 1, "one answer on the reply topic: \(replies.count)")
        let reply = replies[0]
        #expect(reply.partition == 2, "the partition the request named")
        #expect(reply.key == Array(routed.requestID.utf8))
        #expect(Self.correlation(of: reply) == correlation, "the correlation id is echoed byte for byte")
        let result = try ProvisioningResult.decode(reply.value)
        #expect(result.requestID == routed.requestID)
        #expect(result.status == .provisioned && result.isFinal)

        let snapshot = try await rig.wait(for: "the unrouted result") { $0.final(plain.requestID) != nil }
        try await Task.sleep(for: .seconds(1))
        #expect(rig.collector.snapshot.all(routed.requestID).isEmpty, "mirror_replies is off: nothing on the default results topic")
        let unrouted = try #require(snapshot.results[plain.requestID]?.first)
        #expect(!unrouted.headers.contains { $0.key == ReplyRoute.correlationHeader }, "no headers, no change")
    }

    @Test("results.mirror_replies copies a routed result, correlation id included, to the default results topic")
    func mirrorCopiesToTheDefaultTopic() async throws {
        let (rig, _) = try Self.rig { $0.mirrorReplies = true }
        defer { rig.stop() }
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: RecoveryTests.card())
        let correlation = Array("mirror-\(UUID().uuidString)".utf8)
        try await rig.send(request, headers: Self.headers(partition: 0, correlation: correlation))
        let replies = try await KafkaTestReader(bootstrapServers: rig.bootstrap).read(topic: Self.replyTopic, count: 1, timeout: .seconds(60))
        #expect(replies.first?.partition == 0)
        let snapshot = try await rig.wait(for: "the mirrored copy") { $0.final(request.requestID) != nil }
        let copy = try #require(snapshot.results[request.requestID]?.first)
        #expect(copy.headers.last { $0.key == ReplyRoute.correlationHeader }?.value == correlation)
    }

    /// The program here does not sign: its refusal (claimed by nothing, CONTRACT section 12) goes to
    /// the default results topic without the correlation id, which any producer could have copied
    /// (`RequestAuthenticityTests` checks a signed program's refusal keeps its own).
    @Test("reply headers naming a topic not allowed, or malformed, are refused rejected/invalid_request on the default topic, audited; the worker goes on")
    func disallowedAndMalformedRoutesAreRefused() async throws {
        let (rig, _) = try Self.rig()
        defer { rig.stop() }
        let correlation = Array("corr-requests-topic".utf8)
        func header(_ name: String, _ value: [UInt8]?) -> KafkaHeader { KafkaHeader(key: name, value: value) }
        let cases: [(String, [KafkaHeader], echoed: [UInt8]?)] = [
            ("the requests topic", Self.headers(topic: rig.topics.requests, partition: 0, correlation: correlation), nil),
            ("a topic outside results.reply_topics", Self.headers(topic: "other.replies", partition: 0, correlation: correlation), nil),
            ("the reconcile topic", [header(ReplyRoute.topicHeader, Array(rig.topics.reconcile.utf8))], nil),
            ("a 3-byte partition", [header(ReplyRoute.topicHeader, Array(Self.replyTopic.utf8)), header(ReplyRoute.partitionHeader, [0, 0, 1])], nil),
            ("a negative partition", [header(ReplyRoute.topicHeader, Array(Self.replyTopic.utf8)),
                                      header(ReplyRoute.partitionHeader, [0xFF, 0xFF, 0xFF, 0xFF])], nil),
            ("a 257-byte correlation id", [header(ReplyRoute.topicHeader, Array(Self.replyTopic.utf8)),
                                           header(ReplyRoute.correlationHeader, Array(repeating: 7, count: 257))], nil),
            ("a topic that is not UTF-8", [header(ReplyRoute.topicHeader, [0x62, 0xFF, 0xFE])], nil),
            ("a null topic header", [header(ReplyRoute.topicHeader, nil)], nil),
            ("a partition without a topic", [header(ReplyRoute.partitionHeader, [0, 0, 0, 1])], nil),
            // Allowed by the prefix, but not in the cluster (each publish attempt
            // would wait message.timeout.ms and hold the partition's commits).
            ("an allowed topic that does not exist", Self.headers(topic: "backend.nowhere", partition: 0, correlation: correlation), nil),
            ("a partition past the reply topic's end", Self.headers(partition: Int32.max, correlation: correlation), nil),
            ("partition 4 of a 4-partition reply topic", Self.headers(partition: 4, correlation: correlation), nil),
        ]
        var ids: [(String, String, [UInt8]?)] = []
        for (name, headers, echoed) in cases {
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: RecoveryTests.card())
            try await rig.send(request, headers: headers)
            ids.append((name, request.requestID, echoed))
        }
        let good = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: RecoveryTests.card())
        try await rig.send(good, headers: Self.headers(partition: 3, correlation: [1, 2, 3]))
        let sent = ids.map(\.1)
        let snapshot = try await rig.wait(for: "every refusal") { snapshot in sent.allSatisfy { snapshot.final($0) != nil } }
        for (name, id, echoed) in ids {
            let answers = try #require(snapshot.results[id], "\(name): answered")
            #expect(answers.count == 1, "\(name): one answer")
            #expect(answers[0].result.status == .rejected && answers[0].result.code == .invalidRequest,
                    "\(name): \(answers[0].result.status) \(String(describing: answers[0].result.code))")
            #expect(answers[0].headers.last { $0.key == ReplyRoute.correlationHeader }?.value == echoed, "\(name): correlation id")
            #expect(snapshot.stages(id).contains(.rejected), "\(name): audited")
            #expect(!snapshot.stages(id).contains(.issuerCallStarted), "\(name): the issuer is not called")
        }
        let replies = try await KafkaTestReader(bootstrapServers: rig.bootstrap).read(topic: Self.replyTopic, count: 1, timeout: .seconds(60))
        #expect(replies.count == 1 && replies[0].partition == 3, "only the allowed request was routed")
        #expect(replies.first.flatMap { try? ProvisioningResult.decode($0.value) }?.requestID == good.requestID)
        let requests = try await KafkaTestReader(bootstrapServers: rig.bootstrap).readExisting(topic: rig.topics.requests)
        #expect(requests.allSatisfy { (try? ProvisioningResult.decode($0.value)) == nil }, "no result was written to the requests topic")
    }

    @Test("504 after applying: the indeterminate answer and the reconciled provisioned final both reach the reply partition with the correlation id")
    func reconciledFinalReachesTheReplyPartition() async throws {
        let (rig, _) = try Self.rig()
        defer { rig.stop() }
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: RecoveryTests.card("-timeout-applied"))
        let correlation = Crypto.randomBytes(32)
        try await rig.send(request, headers: Self.headers(partition: 1, correlation: correlation))
        let replies = try await KafkaTestReader(bootstrapServers: rig.bootstrap).read(topic: Self.replyTopic, count: 2, timeout: .seconds(60))
        try #require(replies.count == 2)
        let results = try replies.map { try ProvisioningResult.decode($0.value) }
        #expect(results[0].status == .indeterminate && !results[0].isFinal)
        #expect(results[1].status == .provisioned && results[1].isFinal, "\(results[1].status)")
        for reply in replies {
            #expect(reply.partition == 1)
            #expect(Self.correlation(of: reply) == correlation)
        }
        // The reconciliation job carried the route.
        let jobs = try await KafkaTestReader(bootstrapServers: rig.bootstrap).readExisting(topic: rig.topics.reconcile)
        let job = try #require(jobs.compactMap { ReconcileJob.decode($0.value) }.first { $0.requestID == request.requestID })
        #expect(job.reply == ReplyRoute(topic: Self.replyTopic, partition: 1, correlationID: correlation))
        try await Task.sleep(for: .seconds(1))
        #expect(rig.collector.snapshot.all(request.requestID).isEmpty, "nothing on the default results topic")
    }

    @Test("publish_failed on the reply topic: the dead letter keeps the reply headers; dlq replay answers on the reply partition with the correlation id")
    func replayFromTheDeadLetterTopicKeepsTheRoute() async throws {
        let broken = "backend.broken"
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.stack.cluster.createTopic(broken, partitions: 2, replicationFactor: 1)
        rig.stack.cluster.setTopicError(broken, error: .topicAuthorizationFailed)
        let failing = try rig.startWorker(try rig.configuration(workerID: "worker-broken") { configuration in
            configuration.replyTopics = [broken]
            configuration.kafkaProducer["message.timeout.ms"] = "1500"
            configuration.kafkaProducer["log_level"] = "3"
            configuration.publishAttempts = 2
        })
        // Legacy Google Pay: replayable although the issuer was called.
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: RecoveryTests.card())
        let id = request.requestID
        let correlation = Array("replay-\(UUID().uuidString)".utf8)
        try await rig.send(request, headers: Self.headers(topic: broken, partition: 1, correlation: correlation))
        let snapshot = try await rig.wait(for: "the publish_failed dead letter") {
            !$0.deadLetters(id, topic: rig.topics.deadLetters).isEmpty && $0.stages(id).contains(.deadLettered)
        }
        let entry = try #require(snapshot.deadLetters(id, topic: rig.topics.deadLetters).first)
        #expect(entry.provenance?.code == .publishFailed)
        #expect(entry.headers.last { $0.key == ReplyRoute.topicHeader }?.value == Array(broken.utf8))
        #expect(entry.headers.last { $0.key == ReplyRoute.partitionHeader }?.value == [0, 0, 0, 1])
        #expect(entry.headers.last { $0.key == ReplyRoute.correlationHeader }?.value == correlation)

        await rig.stopWorker(failing)
        rig.stack.cluster.setTopicError(broken, error: .noError)
        try rig.startWorker(try rig.configuration(workerID: "worker-fixed") { $0.replyTopics = [broken] })
        let replay = try await rig.operatorTool.dlq(["replay", "--code", "publish_failed", "--operator", "ops.dave"])
        #expect(replay.status == 0, "\(replay)")
        let replies = try await KafkaTestReader(bootstrapServers: rig.bootstrap).read(topic: broken, count: 1, timeout: .seconds(60))
        try #require(replies.count == 1)
        #expect(replies[0].partition == 1)
        #expect(Self.correlation(of: replies[0]) == correlation)
        #expect(replies[0].headers.last { $0.key == DeadLetterHeader.replayOf }.flatMap(\.text) == entry.identifier)
        #expect((try? ProvisioningResult.decode(replies[0].value))?.isFinal == true)
        #expect(rig.collector.snapshot.all(id).isEmpty, "nothing on the default results topic")
    }

    @Test("redelivery after a crash mid-call (a started marker, no answer): the recovered interim and the reconciled final go to the reply partition")
    func redeliveryAfterACrashKeepsTheRoute() async throws {
        let rig = try RecoveryRig(partitions: 1)
        defer { rig.stop() }
        try rig.stack.cluster.createTopic(Self.replyTopic, partitions: 4, replicationFactor: 1)
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: RecoveryTests.card())
        let correlation = Crypto.randomBytes(20)
        // The previous worker read the request, wrote its `started` marker, called, and died.
        let placed = try await rig.send(request, headers: Self.headers(partition: 3, correlation: correlation))
        try await rig.send(RecoveryTests.marker(request.requestID, state: "started", requestOffset: placed.offset, outcome: nil),
                           key: Array(request.requestID.utf8), topic: rig.topics.markers)
        try rig.startWorker(try rig.configuration { $0.replyTopics = [Self.replyTopic] })
        let replies = try await KafkaTestReader(bootstrapServers: rig.bootstrap).read(topic: Self.replyTopic, timeout: .seconds(60)) {
            $0.contains { (try? ProvisioningResult.decode($0.value))?.isFinal == true }
        }
        let results = try replies.map { try ProvisioningResult.decode($0.value) }
        #expect(results.first?.message.contains("a previous worker started this issuer call") == true, "\(results.map(\.message))")
        #expect(results.last?.isFinal == true)
        for reply in replies {
            #expect(reply.partition == 3)
            #expect(Self.correlation(of: reply) == correlation)
        }
        #expect(!Set(rig.stack.simulator.calls.map(\.handshake)).contains(try #require(request.handshake)), "not called again")
        #expect(rig.collector.snapshot.all(request.requestID).isEmpty, "nothing on the default results topic")
    }
}
