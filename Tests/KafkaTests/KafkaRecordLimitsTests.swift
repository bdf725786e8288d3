import Contract
import Kafka
import Recovery
import Testing
import TestSupport

/// The requests topic's record bounds as a consumer applies them (`KafkaRecordLimits` from
/// `RecordBounds.Incoming.requests`), the small dead letter of a record over them
/// (`DeadLetterBuilder.body`), and which produce errors are refusals for good (`KafkaError.refusal`).
@Suite("Record bounds: a consumer keeps nothing of a record over them; its dead letter is its sizes and digest", .timeLimit(.minutes(2)))
struct KafkaRecordLimitsTests {
    static let bounds = RecordBounds.Incoming.requests
    static let limits = KafkaRecordLimits(maxKeyBytes: bounds.maxKeyBytes, maxValueBytes: bounds.maxValueBytes,
                                          maxHeaderCount: bounds.maxHeaderCount, maxHeaderBytes: bounds.maxHeaderBytes,
                                          digest: { Crypto.sha256(raw: $0) })

    @Test("records over each bound arrive as sizes and digest (a key within its bound kept); records at the bounds arrive whole")
    func consumerHoldsRecordsToTheBounds() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic(partitions: 1)
        let producer = try cluster.producer(["message.max.bytes": "3000000"])
        defer { producer.close(timeoutMs: 1_000) }
        let bounds = Self.bounds
        let card = Array("pm_4242".utf8)
        let atBounds = (0..<bounds.maxHeaderCount).map { index in
            KafkaHeader(key: String(format: "h%03d", index), value: [UInt8](repeating: 1, count: bounds.maxHeaderBytes / bounds.maxHeaderCount - 4))
        }
        let cases: [(key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], over: Bool)] = [
            (card, Crypto.randomBytes(bounds.maxValueBytes), atBounds, false),
            ([UInt8](repeating: 7, count: bounds.maxKeyBytes), [], [], false),
            (card, Crypto.randomBytes(bounds.maxValueBytes + 1), [], true),
            ([UInt8](repeating: 7, count: bounds.maxKeyBytes + 1), Array("x".utf8), [], true),
            (nil, Array("{}".utf8), (0...bounds.maxHeaderCount).map { KafkaHeader(key: "n\($0)", value: nil) }, true),
            (card, Array("{}".utf8), [KafkaHeader(key: "big", value: [UInt8](repeating: 2, count: bounds.maxHeaderBytes))], true),
            (nil, Crypto.randomBytes(1_010_000), (0..<4_000).map { KafkaHeader(key: "x-bomb-\($0)", value: [UInt8](repeating: 3, count: 200)) }, true),
        ]
        for item in cases {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: item.key, value: item.value, headers: item.headers, partition: 0))
        }
        let consumer = try KafkaConsumer(configuration: KafkaTestConfiguration.consumer(bootstrapServers: cluster.bootstrapServers,
                                                                                        group: UniqueName.make("bounds"), [:]),
                                         rebalanceListener: nil, recordLimits: Self.limits)
        defer { consumer.close() }
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: TopicPartitionOffset.beginning)])
        let received = await Polling.messages(from: consumer, count: cases.count)
        try #require(received.count == cases.count)
        for (index, (item, message)) in zip(cases, received).enumerated() {
            let headerBytes = item.headers.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }
            let within = bounds.problem(keyBytes: item.key?.count, valueBytes: item.value.count, headerCount: item.headers.count,
                                        headerBytes: headerBytes) == nil
            #expect(within == !item.over, "case \(index): the bounds say \(within ? "within" : "over")")
            guard item.over else {
                #expect(message.oversize == nil && message.key == item.key && message.value == item.value && message.headers == item.headers,
                        "case \(index): a record within the bounds arrives whole")
                continue
            }
            let oversize = try #require(message.oversize, "case \(index): no oversize")
            #expect(oversize == KafkaMessage.Oversize(key: item.key, value: item.value, headers: item.headers,
                                                      valueDigest: Crypto.sha256(item.value)), "case \(index): \(oversize)")
            #expect(message.value.isEmpty && message.headers.isEmpty, "case \(index): value or headers kept")
            #expect(message.key == (item.key.map { $0.count <= bounds.maxKeyBytes } == true ? item.key : nil), "case \(index): key")
        }
    }

    @Test("an oversize record's dead letter: no value, a key only within its bound, sizes and the value's SHA-256 in headers, a few hundred bytes")
    func oversizeDeadLetterIsSmall() throws {
        let value = Crypto.randomBytes(1_010_000)
        let builder = DeadLetterBuilder(deadLetterTopic: "dlq", parkedTopic: "parked", worker: "w1", group: "g",
                                        seal: DeadLetterSeal(key: Sensitive(String(repeating: "k", count: 32))))
        for key in [Array("pm_4242".utf8), [UInt8](repeating: 9, count: 1_000_000), nil] {
            let oversize = KafkaMessage.Oversize(key: key, value: value, headers: [], valueDigest: Crypto.sha256(value))
            let summary = DeadLetterSummary(value: [], recordTimestampMs: nil)
            let made = DeadLetterBuilder.body(key: key, value: value, summary: summary, oversize: oversize, bounds: Self.bounds,
                                              limits: RequestLimits(), nowMs: 1_000)
            let body = (key: made.key, value: made.value, headers: made.headers, summary: summary)
            let letter = builder.letter(key: body.key, value: body.value, headers: body.headers,
                                        source: .init(partition: TopicPartition(topic: "provisioning.requests", partition: 0), offset: 7, timestampMs: 1),
                                        code: DeadLetterCode(.oversize), reason: "over", attempts: 1, firstFailedAtMs: 1, nowMs: 2, replayOf: nil,
                                        replay: DeadLetterReplayPolicy.verdict(code: DeadLetterCode(.oversize), summary: body.summary,
                                                                                      issuerMayHaveBeenCalled: false, nowMs: 2),
                                        parkedReason: "parked")
            let message = letter.message
            let size = (message.key?.count ?? 0) + (message.value?.count ?? 0) + message.headers.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }
            #expect(size < 1_024, "a dead letter of \(size) bytes")
            #expect(message.value?.isEmpty ?? true)
            #expect(message.key == (key.map { $0.count <= Self.bounds.maxKeyBytes } == true ? key : nil))
            func header(_ name: String) -> String? { message.headers.last { $0.key == name }?.stringValue }
            #expect(header(DeadLetterHeader.originalValueBytes) == "1010000")
            #expect(header(DeadLetterHeader.originalKeyBytes) == key.map { String($0.count) })
            #expect(header(DeadLetterHeader.originalHeaderCount) == "0" && header(DeadLetterHeader.originalHeaderBytes) == "0")
            #expect(header(DeadLetterHeader.originalValueSHA256) == Crypto.hex(Crypto.sha256(value)))
            #expect(header(DeadLetterHeader.code) == "oversize" && header(DeadLetterHeader.mac) != nil)
        }
        // A record within its bounds keeps its key and value (an expired Apple Pay request loses its handshake only).
        let small = Array(#"{"version":1,"request_id":"r1"}"#.utf8)
        let kept = DeadLetterBuilder.body(key: Array("pm_1".utf8), value: small, summary: DeadLetterSummary(value: small, recordTimestampMs: nil),
                                          oversize: nil, bounds: Self.bounds, limits: RequestLimits(), nowMs: 1_000)
        #expect(kept.key == Array("pm_1".utf8) && kept.value == small && kept.headers.isEmpty)
    }

    @Test("refusals for good: too large, not authorized, invalid; retriable and fatal errors are not refusals")
    func refusalClassification() {
        #expect(KafkaError(code: .messageSizeTooLarge, message: "").refusal == .messageTooLarge)
        #expect(KafkaError(code: .topicAuthorizationFailed, message: "").refusal == .notAuthorized)
        #expect(KafkaError(code: .clusterAuthorizationFailed, message: "").refusal == .notAuthorized)
        #expect(KafkaError(code: .invalidRecord, message: "").refusal == .invalidRecord)
        #expect(KafkaError(code: .policyViolation, message: "").refusal == .invalidRecord)
        for retriable in [KafkaError.Code.queueFull, .messageTimedOut, .notLeaderForPartition, .requestTimedOut, .transport,
                          .unknownTopicOrPartition, .notEnoughReplicas, .allBrokersDown] {
            #expect(KafkaError(code: retriable, message: "").refusal == nil, "\(retriable)")
        }
        #expect(KafkaError(code: .messageSizeTooLarge, message: "", isFatal: true).refusal == nil)
        #expect(KafkaError(code: .fatal, message: "").refusal == nil)
    }
}
