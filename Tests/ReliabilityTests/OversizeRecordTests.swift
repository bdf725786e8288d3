import Contract
import Foundation
import Harness
import Kafka
import Observability
import Recovery
import Testing
import TestSupport

extension ReliabilityTests {
    /// Hostile records against a `provisioner worker` process where `demo-imprint` signs, all on
    /// the one partition, each followed by a valid signed request: an unsigned 1,010,000-byte value
    /// of garbage, a 1,000,000-byte key on a value that is not JSON, and a header bomb (4,000
    /// headers, ~850 KB, on a small unsigned value). Before the record bounds, the first two were
    /// dead-lettered whole (value or key), over the worker producer's 1,000,000-byte record limit:
    /// the letter was retried for ever, never written, and the partition's committed offset stayed
    /// at the first of them while the requests after it were answered. Now each is a dead letter
    /// `oversize` of a few hundred bytes (sizes and the value's SHA-256), both valid requests are
    /// answered after one issuer call each, and the group's committed offset reaches the end.
    @Test("records over their bounds (value, key, headers) become small dead letters and the partition's commits reach its end")
    func oversizedRecordsDoNotStopAPartition() async throws {
        let rig = try await IdentityRig(name: "reliability-record-bounds")
        defer { rig.stop() }
        let worker = try await rig.worker("bounds-w1")
        defer { worker.process.kill() }
        var properties = rig.rig.endpoints.producerProperties
        properties["message.max.bytes"] = "3000000"
        let producer = try KafkaProducer(configuration: properties)
        defer { producer.close(timeoutMs: 5_000) }
        let topic = rig.rig.topics.requests
        func send(key: [UInt8]?, value: [UInt8], headers: [KafkaHeader]) async throws -> Int64 {
            let message = KafkaOutgoingMessage(topic: topic, key: key, value: value, headers: headers)
            let report: KafkaDeliveryReport = try await producer.send(message)
            return report.offset
        }
        let factory = rig.factory
        func valid(_ name: String) async throws -> (request: GeneratedRequest, offset: Int64) {
            let request = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_bounds_\(name)",
                                                requestID: factory.requestID(name))
            let headers = RequestSigner(secret: Sensitive(rig.secret)).signed(key: request.key, value: request.value, headers: [], partition: 0,
                                                                              nowMs: Timestamps.nowMs())
            return (request, try await send(key: request.key, value: request.value, headers: headers))
        }

        struct Hostile { let name: String; let offset: Int64; let key: [UInt8]?; let value: [UInt8]; let headerCount: Int; let headerBytes: Int }
        var hostile: [Hostile] = []
        var answered: [(request: GeneratedRequest, offset: Int64)] = []
        // 1. An unsigned 1,010,000-byte value of garbage, keyed like a card.
        let garbage = Crypto.randomBytes(1_010_000)
        hostile.append(Hostile(name: "value", offset: try await send(key: Array("pm_bounds_garbage".utf8), value: garbage, headers: []),
                               key: Array("pm_bounds_garbage".utf8), value: garbage, headerCount: 0, headerBytes: 0))
        answered.append(try await valid("after-value"))
        // 2. A 1,000,000-byte key on a value that is not JSON.
        let bigKey = [UInt8](repeating: UInt8(ascii: "k"), count: 1_000_000)
        let notJSON = Array("not json at all".utf8)
        hostile.append(Hostile(name: "key", offset: try await send(key: bigKey, value: notJSON, headers: []),
                               key: bigKey, value: notJSON, headerCount: 0, headerBytes: 0))
        answered.append(try await valid("after-key"))
        // 3. A header bomb: 4,000 headers of 200 bytes each on a small unsigned copy of a request.
        let copied = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_bounds_bomb", requestID: factory.requestID("bomb"))
        let bomb = (0..<4_000).map { KafkaHeader(key: "x-bomb-\($0)", value: [UInt8](repeating: UInt8(ascii: "h"), count: 200)) }
        let bombBytes = bomb.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }
        hostile.append(Hostile(name: "headers", offset: try await send(key: copied.key, value: copied.value, headers: bomb),
                               key: copied.key, value: copied.value, headerCount: bomb.count, headerBytes: bombBytes))
        answered.append(try await valid("after-headers"))

        // Both (all three) valid requests answered, each after exactly one issuer call with its own handshake.
        let allAnswered = rig.collector.wait(timeoutMs: 60_000) { snapshot in answered.allSatisfy { snapshot.final($0.request.requestID) != nil } }
        #expect(allAnswered, "the valid requests after the hostile records were not all answered")
        let snapshotAfterAnswers = rig.collector.snapshot
        for (request, _) in answered {
            let final = snapshotAfterAnswers.final(request.requestID)
            #expect(final?.status == .provisioned, "\(request.requestID): \(final?.status.rawValue ?? "no final")")
            let cardID = JSONValue.parsed(request.value)["card"]?["id"]?.stringValue
            let calls = rig.rig.simulator.calls.filter { $0.cardID == cardID }
            #expect(calls.map(\.count) == [1] && calls.first?.handshake == request.handshake, "\(request.requestID): calls \(calls)")
        }
        #expect(!rig.rig.simulator.calls.contains { $0.cardID == "pm_bounds_bomb" }, "the header bomb's request reached the issuer")

        // Every hostile record: exactly one dead letter `oversize`, small, with its sizes and digest.
        let lettered = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            hostile.allSatisfy { record in snapshot.deadLetters.contains { $0.provenance?.originalOffset == record.offset } }
        }
        #expect(lettered, "not every hostile record was dead-lettered")
        let letters = rig.collector.snapshot.deadLetters
        var letterSizes: [String: Int] = [:]
        for record in hostile {
            let mine = letters.filter { $0.provenance?.originalOffset == record.offset && $0.provenance?.originalTopic == topic }
            #expect(mine.count == 1, "\(record.name): \(mine.count) dead letters")
            guard let letter = mine.first else { continue }
            let size = (letter.key?.count ?? 0) + (letter.value?.count ?? 0)
                + letter.headers.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }
            letterSizes[record.name] = size
            #expect(size <= 4_096, "\(record.name): a dead letter of \(size) bytes")
            #expect(letter.provenance?.code == DeadLetterCode(.oversize), "\(record.name): code \(letter.provenance?.code.rawValue ?? "none")")
            #expect(letter.topic == rig.rig.topics.deadLetters && letter.provenance?.isReplayable == false)
            #expect(letter.value?.isEmpty ?? true, "\(record.name): the letter keeps \(letter.value?.count ?? 0) bytes of value")
            func header(_ name: String) -> String? { letter.headers.last { $0.key == name }?.stringValue }
            #expect(header(DeadLetterHeader.originalValueBytes) == String(record.value.count), "\(record.name): value bytes")
            #expect(header(DeadLetterHeader.originalKeyBytes) == record.key.map { String($0.count) }, "\(record.name): key bytes")
            #expect(header(DeadLetterHeader.originalHeaderCount) == String(record.headerCount), "\(record.name): header count")
            #expect(header(DeadLetterHeader.originalHeaderBytes) == String(record.headerBytes), "\(record.name): header bytes")
            #expect(header(DeadLetterHeader.originalValueSHA256) == Crypto.hex(Crypto.sha256(record.value)), "\(record.name): digest")
            // A key over its bound is not kept; a card id within it is.
            #expect(letter.key == (record.key.map { $0.count <= RecordBounds.Incoming.requests.maxKeyBytes } == true ? record.key : nil))
            #expect(!letter.headers.contains { $0.key.hasPrefix("x-bomb-") }, "\(record.name): the letter copies the record's headers")
        }
        // The header bomb's copied request got no answer (it was never read as a request).
        #expect(rig.collector.snapshot.results[copied.requestID] == nil, "the header bomb was answered")

        // The group's committed offset of the partition reaches its end (the last valid request).
        let end = try #require(answered.last?.offset) + 1
        let progress = try await KafkaChecks.waitForCommitsAtEnd(bootstrapServers: rig.rig.endpoints.bootstrapServers, group: rig.rig.group,
                                                                 topic: topic, partitions: 1, timeoutMs: 30_000)
        let committed = progress[0]?.committed ?? -1
        #expect(committed == end && progress[0]?.end == end, "committed offset \(committed), end \(progress[0]?.end ?? -1)")
        #expect(worker.isRunning, "the worker process stopped")
        print("RELIABILITY {\"test\":\"record_bounds\",\"committed\":\(committed),\"end\":\(end),"
              + "\"dead_letter_bytes\":{\(letterSizes.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ","))}}")
    }
}

extension ReliabilityTests {
    /// A dead letter the cluster refuses for good: the worker process's producer allows records of
    /// 20,000 bytes (`message.max.bytes`), and an unsigned 30,000-byte value that is not JSON (within
    /// the record bounds, so its letter keeps it whole) is refused `MSG_SIZE_TOO_LARGE` on every
    /// attempt. Before, that letter was retried every 2 s for ever and the partition's committed
    /// offset stayed at it; now it is given up with an error log line (and a metric), and the
    /// offset completes: the valid request after it is answered and the commits reach the end.
    @Test("a dead letter refused for good (too large for the producer) is given up with an error, and the partition's commits reach its end")
    func refusedDeadLetterIsGivenUp() async throws {
        let rig = try await IdentityRig(name: "reliability-refused-letter")
        defer { rig.stop() }
        let worker = try await rig.worker("refused-w1", environment: ["PROVISIONER_KAFKA_PRODUCER__MESSAGE_MAX_BYTES": "20000"])
        defer { worker.process.kill() }
        let topic = rig.rig.topics.requests
        let bulky = [UInt8](repeating: UInt8(ascii: "x"), count: 30_000)
        let refusedOffset = try await rig.rig.producer.send(KafkaOutgoingMessage(topic: topic, key: Array("pm_refused".utf8), value: bulky)).offset
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_refused_next",
                                                requestID: rig.factory.requestID("after-refused"))
        let headers = RequestSigner(secret: Sensitive(rig.secret)).signed(key: request.key, value: request.value, headers: [], partition: 0,
                                                                          nowMs: Timestamps.nowMs())
        let lastOffset = try await rig.rig.producer.send(KafkaOutgoingMessage(topic: topic, key: request.key, value: request.value,
                                                                              headers: headers)).offset
        #expect(rig.collector.wait(timeoutMs: 30_000) { $0.final(request.requestID)?.status == .provisioned },
                "the request after the refused dead letter was not provisioned")
        let progress = try await KafkaChecks.waitForCommitsAtEnd(bootstrapServers: rig.rig.endpoints.bootstrapServers, group: rig.rig.group,
                                                                 topic: topic, partitions: 1, timeoutMs: 30_000)
        let committed = progress[0]?.committed ?? -1
        #expect(committed == lastOffset + 1, "committed offset \(committed), end \(progress[0]?.end ?? -1)")
        // Given up, not written: no dead letter for it, and one error line naming why (never the record).
        #expect(!rig.collector.snapshot.deadLetters.contains { $0.provenance?.originalOffset == refusedOffset })
        let givenUp = worker.logEntries.filter { $0["msg"]?.stringValue?.hasPrefix("dead letter refused by the cluster for good") == true }
        #expect(givenUp.count == 1 && givenUp.first?["level"]?.stringValue == "error" && givenUp.first?["refusal"]?.stringValue == "message_too_large"
                && givenUp.first?["offset"]?.int64Value == refusedOffset, "log lines: \(givenUp)")
        #expect(worker.isRunning, "the worker process stopped")
        print("RELIABILITY {\"test\":\"refused_dead_letter\",\"committed\":\(committed),\"end\":\(lastOffset + 1),\"given_up\":\(givenUp.count)}")
    }
}
