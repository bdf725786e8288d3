import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Synchronization
import Testing
import TestSupport

extension ReliabilityTests {
    /// At least 10,000 malformed messages of every kind (broken JSON, wrong types, huge strings, deep
    /// nesting, invalid UTF-8, binary garbage, empty values, over-size and 1 MiB messages, unknown
    /// versions, missing keys) streamed with valid requests between them. The worker stays up; each
    /// valid request is provisioned, each malformed one is answered `rejected` (when its request id
    /// is readable) or dead-lettered with the right code, counted exactly; every partition's commits
    /// reach its end and valid requests sent after the garbage are answered promptly.
    @Test("bad input at volume: every message answered or dead-lettered exactly, no partition stalls")
    func badInputAtVolume() async throws {
        let partitions = 6
        let malformedTotal = ReliabilityScale.pick(10_000, long: 40_000)
        let validEvery = 20
        let seed = SeededGenerator.seed(fallback: 20_261_130)
        let stack = try EmbeddedStack(brokers: 1, partitions: partitions)
        defer { stack.stop() }
        let group = UniqueName.make("reliability-bad-input")
        let logs = CapturingLogHandler()
        let metrics = MetricsRegistry()
        let worker = try stack.startWorker(try stack.configuration(groupID: group, workerID: "bad-input-w1"),
                                           logger: Logger(label: "worker", minimumLevel: .notice, handler: logs), metrics: metrics)
        try #require(stack.waitForGroup(timeoutMs: 60_000))
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
        defer { collector.stop() }
        // 1 MiB messages: the test's producer allows 2 MB records (librdkafka's default is 1,000,000 bytes).
        var producerProperties = stack.producerProperties
        producerProperties["message.max.bytes"] = "2000000"
        producerProperties["linger.ms"] = "5"
        let producer = try KafkaProducer(configuration: producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 1, replyKeyPool: 8)
        try EmbeddedStack.warmUp(partitions: partitions, topic: stack.topics.requests, factory: factory, producer: producer,
                                 collector: collector, timeoutMs: 60_000)

        let template = JSONValue.parsed(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_bad").value)
        var generator = MalformedInput(seed: seed, template: template)
        struct Placement: Hashable { var partition: Int32; var offset: Int64 }
        let deliveries = Mutex<(offsets: [Int: Placement], failures: [Int: String])>(([:], [:]))
        var expected: [Int: MalformedInput.Expected] = [:]
        var sizes: [Int: Int] = [:]
        var categories: [String: Int] = [:]
        var validIDs: [String] = []
        var sentBytes = 0
        var sentCount = 0
        let startedMs = Timestamps.nowMs()

        func send(_ value: [UInt8]?, key: [UInt8]?, headers: [KafkaHeader]) throws {
            let index = sentCount
            sentCount += 1
            sentBytes += value?.count ?? 0
            let message = KafkaOutgoingMessage(topic: stack.topics.requests, key: key, value: value, headers: headers,
                                               partition: Int32(index % partitions))
            while true {
                let attempt = Result { () throws(KafkaError) in
                    try producer.send(message) { result in
                        deliveries.withLock { state in
                            switch result {
                            case .success(let report): state.offsets[index] = Placement(partition: report.partition, offset: report.offset)
                            case .failure(let error): state.failures[index] = error.description
                            }
                        }
                    }
                }
                switch attempt {
                case .success: return
                case .failure(let error) where error.code == .queueFull: usleep(2_000)
                case .failure(let error): throw error
                }
            }
        }
        /// Keeps the stream within `ahead` messages of what the worker has answered.
        func keepUp(ahead: Int) async {
            let target = sentCount - ahead
            _ = await DedicatedThread.run {
                collector.wait(timeoutMs: 120_000) { $0.results.count + $0.deadLetters.count >= target }
            }
        }

        let oneMegabyteAt = Set((1...4).map { $0 * malformedTotal / 5 + $0 })
        var made = 0
        while made < malformedTotal {
            let message: MalformedInput.Message
            if oneMegabyteAt.contains(made) {
                message = generator.oversize(bytes: 1 << 20, category: "one_mebibyte")
            } else if made % 400 == 199 {
                message = generator.oversize(bytes: 65_537 + (made * 37) % 140_000, category: "oversize")
            } else {
                message = generator.make(MalformedInput.categories[made % MalformedInput.categories.count])
            }
            expected[sentCount] = message.expected
            sizes[sentCount] = message.value?.count ?? 0
            categories[message.category, default: 0] += 1
            try send(message.value, key: message.key, headers: message.headers)
            made += 1
            if made % validEvery == 0 {
                let valid = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_good_\(made)",
                                                  requestID: factory.requestID("good"))
                validIDs.append(valid.requestID)
                try send(valid.value, key: valid.key, headers: [])
            }
            if made % 500 == 0 { await keepUp(ahead: 1_500) }
        }
        #expect(producer.flush(timeoutMs: 60_000))
        let garbageDoneMs = Timestamps.nowMs()

        // Valid requests after the garbage: one per partition, answered promptly.
        var probes: [String: Int64] = [:]
        for partition in 0..<partitions {
            let probe = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_probe_\(partition)",
                                              requestID: factory.requestID("probe"))
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: probe.key, value: probe.value,
                                                   partition: Int32(partition))) { _ in }
            probes[probe.requestID] = Timestamps.nowMs()
        }
        let probeIDs = Array(probes.keys)
        let probesAnswered = await DedicatedThread.run {
            collector.wait(timeoutMs: 30_000) { snapshot in probeIDs.allSatisfy { snapshot.final($0) != nil } }
        }
        let probeSnapshot = collector.snapshot
        let probeLatencies = probes.compactMap { id, sentAt in probeSnapshot.results[id]?.first.map { $0.consumedAtMs - sentAt } }
        #expect(probesAnswered, "valid requests sent after the garbage were not all answered within 30 s")
        #expect((probeLatencies.max() ?? 0) < 15_000, "a valid request after the garbage took \(probeLatencies.max() ?? 0) ms")

        // Every partition's commits reach its end: nothing is stuck behind a bad message.
        let progress = try await KafkaChecks.waitForCommitsAtEnd(bootstrapServers: stack.bootstrapServers, group: group,
                                                                 topic: stack.topics.requests, partitions: partitions, timeoutMs: 60_000)
        let stalled = progress.filter { $0.value.committed != $0.value.end }
        #expect(stalled.isEmpty, "partitions whose commits did not reach the end (committed, end): \(stalled.sorted { $0.key < $1.key })")
        let (offsets, failures) = deliveries.withLock { ($0.offsets, $0.failures) }
        #expect(failures.isEmpty, "the test producer could not send: \(failures.prefix(3))")

        // Exact reconciliation. Dead letters are counted as the collector streamed them (a mock
        // partition keeps only its last ~5 MB); once every output is acknowledged (commits at the end)
        // the collector must have read each dead-letter partition up to its end.
        let deadEnds = try await KafkaChecks.commitProgress(bootstrapServers: stack.bootstrapServers, group: group,
                                                            topic: stack.topics.deadLetters, partitions: partitions).mapValues(\.end)
        let deadTopic = stack.topics.deadLetters
        let caughtUp = await DedicatedThread.run {
            collector.wait(timeoutMs: 60_000) { snapshot in
                let seen = Dictionary(grouping: snapshot.deadLetters.filter { $0.topic == deadTopic }, by: \.partition).mapValues { $0.count }
                return deadEnds.allSatisfy { partition, end in (seen[partition] ?? 0) >= Int(end) }
            }
        }
        #expect(caughtUp, "the collector did not read every dead letter")
        // Likewise every result written (the topics started empty: their ends count every record).
        let resultEnds = try await KafkaChecks.commitProgress(bootstrapServers: stack.bootstrapServers, group: group,
                                                              topic: stack.topics.results, partitions: partitions).values.map(\.end)
        let resultTotal = Int(resultEnds.reduce(0, +))
        let resultsRead = await DedicatedThread.run {
            collector.wait(timeoutMs: 60_000) { snapshot in
                snapshot.results.values.reduce(0) { $0 + $1.count } + snapshot.undecodableResults >= resultTotal
            }
        }
        #expect(resultsRead, "the collector did not read every result")
        let finalSnapshot = collector.snapshot
        let deadEntries = finalSnapshot.deadLetters.filter { $0.topic == deadTopic }
        var deadByOrigin: [Placement: [String]] = [:]
        // What each over-size record's dead letter says of it: its value's length, and the letter's own value length (none kept).
        var oversizeLetters: [Placement: (valueBytes: Int?, keptBytes: Int)] = [:]
        var largestDeadLetter = 0
        for entry in deadEntries {
            guard let provenance = entry.provenance else { Issue.record("a dead letter without provenance headers"); continue }
            let origin = Placement(partition: provenance.originalPartition, offset: provenance.originalOffset)
            deadByOrigin[origin, default: []].append(provenance.code.rawValue)
            largestDeadLetter = max(largestDeadLetter, entry.value?.count ?? 0)
            if let header = entry.headers.last(where: { $0.key == DeadLetterHeader.originalValueBytes })?.value {
                oversizeLetters[origin] = (Int(String(decoding: header, as: UTF8.self)), entry.value?.count ?? 0)
            }
        }
        let results = finalSnapshot.results.mapValues { $0.map(\.result) }
        #expect(finalSnapshot.undecodableResults == 0)

        var expectedDead = 0
        var expectedRejected = 0
        var wrongDead: [String] = []
        var wrongRejected: [String] = []
        var rejectedCodes: [String: Int] = [:]
        var deadCodes: [String: Int] = [:]
        for (index, answer) in expected {
            guard let placement = offsets[index] else { continue }
            switch answer {
            case .deadLetter(let code):
                expectedDead += 1
                let found = deadByOrigin[placement] ?? []
                if found.count != 1 || (code != nil && found.first != code) {
                    wrongDead.append("#\(index) at \(placement.partition):\(placement.offset) expected one dead letter \(code ?? "any"), found \(found)")
                }
                if let first = found.first { deadCodes[first, default: 0] += 1 }
                // Over-size values are not kept: the letter carries their length (and digest) in headers.
                let size = sizes[index] ?? 0
                if size > 65_536, let letter = oversizeLetters[placement], letter.valueBytes != size || letter.keptBytes != 0 {
                    wrongDead.append("#\(index): \(size)-byte message dead-lettered with dlq.original.value_bytes=\(letter.valueBytes ?? -1), \(letter.keptBytes) bytes of value kept")
                } else if size > 65_536, oversizeLetters[placement] == nil {
                    wrongDead.append("#\(index): \(size)-byte message dead-lettered without dlq.original.value_bytes")
                }
            case .rejected(let id):
                expectedRejected += 1
                let answers = results[id] ?? []
                if answers.count != 1 || answers.first?.status != .rejected || answers.first?.isFinal != true {
                    wrongRejected.append("\(id): \(answers.map { "\($0.status.rawValue)/\($0.code?.rawValue ?? "-")" })")
                }
                if let code = answers.first?.code?.rawValue { rejectedCodes[code, default: 0] += 1 }
                if deadByOrigin[placement] != nil { wrongRejected.append("\(id) was also dead-lettered") }
            }
        }
        #expect(wrongDead.isEmpty, "\(wrongDead.count) messages not dead-lettered exactly once with their code: \(wrongDead.prefix(5))")
        #expect(wrongRejected.isEmpty, "\(wrongRejected.count) messages not answered exactly once as rejected: \(wrongRejected.prefix(5))")
        #expect(largestDeadLetter <= 65_536, "a dead letter of \(largestDeadLetter) bytes: no dead letter may exceed the request limit")
        #expect(deadEntries.count == expectedDead, "dead letters: \(deadEntries.count), expected \(expectedDead)")
        let validWrong = validIDs.filter { results[$0]?.count != 1 || results[$0]?.first?.status != .provisioned }
        #expect(validWrong.isEmpty, "\(validWrong.count) valid requests among the garbage were not provisioned exactly once: \(validWrong.prefix(5).map { "\($0): \(results[$0]?.map(\.status.rawValue) ?? [])" })")
        let knownIDs = Set(validIDs).union(probes.keys).union(expected.values.compactMap { if case .rejected(let id) = $0 { id } else { nil } })
        let strays = results.keys.filter { !knownIDs.contains($0) && !$0.hasPrefix("warmup-") }
        #expect(strays.isEmpty, "results for request ids nobody sent: \(strays.prefix(5))")
        #expect(worker.isReady && worker.assignedPartitionCount == partitions, "the worker is not ready after the bad input")
        let elapsedMs = garbageDoneMs - startedMs
        var warningKinds: [String: Int] = [:]
        for record in logs.records where record.level >= .warning {
            let error = record.field("error").map { String(describing: $0).prefix(40) } ?? ""
            warningKinds[record.message + (error.isEmpty ? "" : " (\(error))"), default: 0] += 1
        }

        ReliabilityReport.emit("bad_input", [
            "seed": ReliabilityReport.int(Int64(bitPattern: seed)), "messages": ReliabilityReport.int(sentCount),
            "malformed": ReliabilityReport.int(malformedTotal), "valid": ReliabilityReport.int(validIDs.count),
            "malformed_by_category": ReliabilityReport.counts(categories), "bytes_sent": ReliabilityReport.int(sentBytes),
            "largest_message_bytes": ReliabilityReport.int(1 << 20), "largest_dead_letter_bytes": ReliabilityReport.int(largestDeadLetter),
            "oversize_dead_letters": ReliabilityReport.int(oversizeLetters.count),
            "expected_dead_letters": ReliabilityReport.int(expectedDead), "dead_letters": ReliabilityReport.int(deadEntries.count),
            "dead_letters_by_code": ReliabilityReport.counts(deadCodes),
            "expected_rejected": ReliabilityReport.int(expectedRejected), "rejected_by_code": ReliabilityReport.counts(rejectedCodes),
            "valid_provisioned": ReliabilityReport.int(validIDs.count - validWrong.count),
            "misanswered": ReliabilityReport.int(wrongDead.count + wrongRejected.count + validWrong.count),
            "stray_results": ReliabilityReport.int(strays.count), "stalled_partitions": ReliabilityReport.int(stalled.count),
            "probe_latency_max_ms": ReliabilityReport.int(probeLatencies.max() ?? -1),
            "stream_seconds": .number(JSONNumber(literal: String(format: "%.1f", Double(elapsedMs) / 1000))!),
            "messages_per_second": ReliabilityReport.int(Int(Double(sentCount) * 1000 / Double(max(1, elapsedMs)))),
            "worker_restarts": ReliabilityReport.int(0), "worker_warnings": ReliabilityReport.counts(warningKinds),
        ])
    }
}
