import Contract
import Foundation
import Harness
import Kafka
import Observability
import Recovery
import Testing
import TestSupport

extension RecoveryTests {
    // MARK: - A dead-letter read holds at most its limit

    /// A dead-letter topic with more records than the limit (4 KiB values): the read returns exactly
    /// the newest `limit`, holds no more than `limit` entries at any moment, and with no other
    /// criterion reads only each partition's last `limit` offsets. `dlq list` takes the newest 100
    /// unless `--limit` asks for another number.
    @Test("dead-letter reads keep only the newest limit entries while reading; dlq list defaults to the newest 100")
    func deadLetterReadsAreBounded() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let topics = rig.topics
        let count = 250
        let base = Timestamps.nowMs() - 3_600_000
        let filler = [UInt8](repeating: UInt8(ascii: "a"), count: 4096)
        for index in 0..<count {
            let at = base + Int64(index) * 1_000
            let provenance = DeadLetterProvenance(
                originalTopic: topics.requests, originalPartition: 0, originalOffset: Int64(index), originalTimestampMs: at, code: DeadLetterCode(.notJSON),
                reason: "not JSON", attempts: 1, firstFailedAtMs: at, failedAtMs: at, worker: "w", group: rig.group, isReplayable: false,
                replayableReason: "the message itself is malformed: fix the producer and send a new request")
            try await rig.send(filler, key: Array("key-\(index % 7)".utf8), headers: provenance.headers, topic: topics.deadLetters)
        }
        let store = DeadLetterStore(properties: rig.stack.consumerProperties)
        func read(_ filter: DeadLetterFilter) async throws -> DeadLetterRead {
            try await DedicatedThread.run(name: "dlq-read") { try store.read(topic: topics.deadLetters, filter: filter) }
        }
        func offsets(_ entries: [DeadLetterEntry]) -> [Int64] { entries.compactMap { $0.provenance?.originalOffset } }
        let newest20 = (count - 20..<count).map(Int64.init)

        var limited = DeadLetterFilter()
        limited.limit = 20
        let tail = try await read(limited)
        #expect(offsets(tail.entries) == newest20, "exactly the newest 20, oldest first")
        #expect(tail.peakRetained <= 20, "held \(tail.peakRetained) entries at once")
        #expect(tail.scanned <= 20 * rig.stack.partitions, "read \(tail.scanned) records: only each partition's last 20 offsets")

        // With a criterion every record is read, and still no more than the limit is held.
        var matching = limited
        matching.code = "not_json"
        let scan = try await read(matching)
        #expect(offsets(scan.entries) == newest20)
        #expect(scan.scanned == count, "every record was read")
        #expect(scan.peakRetained == 20, "held \(scan.peakRetained) entries at once")

        // No limit (show by request id): every match.
        let all = try await read(DeadLetterFilter())
        #expect(all.entries.count == count)

        // The operator tool: the newest 100 by default, --limit for another number.
        let tool = rig.operatorTool
        let list = try await tool.dlq(["list", "--json"])
        #expect(list.status == 0, "\(list)")
        let listed = try DLQListing.entries(json: list.standardOutput).compactMap { $0["original"]?.stringValue?.split(separator: ":").last.flatMap { Int64($0) } }
        #expect(listed == (count - DeadLetterFilter.defaultLimit..<count).map(Int64.init))
        let table = try await tool.dlq(["list", "--limit", "5"])
        #expect(table.status == 0, "\(table)")
        #expect(DLQListing(table: table.standardOutput).rows.count == 5)
        #expect(table.output.contains("5 dead letter(s) in \(topics.deadLetters): the newest 5 matching; --limit N"), "\(table)")
        let tooMany = try await tool.dlq(["list", "--limit", "0"])
        #expect(tooMany.status != 0 && tooMany.everything.contains("--limit must be a whole number from 1 (at most 1000 are kept)"), "\(tooMany)")
    }
}
