import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

extension RecoveryTests {
    // MARK: - 6a. Poison → DLQ → list → show → dry run → replay → parked

    @Test("operator loop: a poison message gets every dlq.* header; list, show (redacted), dry run (no effect), filters, rate; a failing replay is parked")
    func poisonMessageOperatorLoop() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration(workerID: "worker-ops"))
        let topics = rig.topics
        let tool = rig.operatorTool
        // One key: every message lands in one partition, in this order.
        let key = Array("poison-\(UUID().uuidString)".utf8)

        // A backend on a newer schema sends version 2: an Apple Pay request (secrets inside), three
        // Google Wallet requests; and a broken producer sends bytes that are not JSON.
        let apple = try rig.factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: Self.card())
        let googleA = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: Self.card())
        let googleB = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: Self.card())
        let googleC = try rig.factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: Self.card())
        let sentAt = Timestamps.nowMs()
        var reports: [KafkaDeliveryReport] = []
        var poisons: [[UInt8]] = []
        for (index, value) in [try PoisonMessage.withVersion(2, apple.value), try PoisonMessage.withVersion(2, googleA.value),
                               try PoisonMessage.withVersion(2, googleB.value), try PoisonMessage.withVersion(2, googleC.value),
                               PoisonMessage.notJSON].enumerated() {
            reports.append(try await rig.send(value, key: key))
            poisons.append(value)
            // One at a time, so their failure times are distinct and ordered.
            try await rig.wait(for: "dead letter \(index + 1)") { snapshot in
                snapshot.deadLetters.filter { $0.topic == topics.deadLetters }.count == index + 1
            }
        }
        var snapshot = rig.collector.snapshot
        let dlq = snapshot.deadLetters.filter { $0.topic == topics.deadLetters }
        try #require(dlq.count == 5)
        func entry(at report: KafkaDeliveryReport) throws -> DeadLetterEntry {
            try #require(dlq.first { $0.provenance?.originalPartition == report.partition && $0.provenance?.originalOffset == report.offset })
        }
        let appleEntry = try entry(at: reports[0])
        let googleEntryA = try entry(at: reports[1])
        let googleEntryB = try entry(at: reports[2])
        let googleEntryC = try entry(at: reports[3])
        let garbageEntry = try entry(at: reports[4])

        // Every header of CONTRACT section 6, with its value.
        let stored = try await KafkaTestReader(bootstrapServers: rig.bootstrap).readExisting(topic: topics.requests)
        for (entry, report) in zip([appleEntry, googleEntryA, googleEntryB, googleEntryC, garbageEntry], reports) {
            let names = Set(entry.headers.map(\.key))
            for name in DeadLetterHeader.provenance + [DeadLetterHeader.mac] { #expect(names.contains(name), "\(name) missing on \(entry.identifier)") }
            let original = try #require(stored.first { $0.partition == report.partition && $0.offset == report.offset })
            #expect(entry.header(DeadLetterHeader.originalTopic) == topics.requests)
            #expect(entry.header(DeadLetterHeader.originalPartition) == String(report.partition))
            #expect(entry.header(DeadLetterHeader.originalOffset) == String(report.offset))
            #expect(entry.header(DeadLetterHeader.originalTimestamp) == original.timestampMs.map(String.init))
            #expect(entry.header(DeadLetterHeader.attempts) == "1")
            let first = try #require(entry.header(DeadLetterHeader.firstFailedAt).flatMap(RFC3339.parse))
            let failed = try #require(entry.header(DeadLetterHeader.failedAt).flatMap(RFC3339.parse))
            #expect(sentAt <= first && first <= failed && failed <= Timestamps.nowMs())
            #expect(entry.header(DeadLetterHeader.worker) == "worker-ops")
            #expect(entry.header(DeadLetterHeader.group) == rig.group)
            #expect(entry.header(DeadLetterHeader.reason)?.isEmpty == false)
            #expect(entry.header(DeadLetterHeader.replayableReason)?.isEmpty == false)
            #expect(entry.key == key, "keyed as the original")
        }
        #expect(appleEntry.header(DeadLetterHeader.code) == "unknown_version")
        #expect(googleEntryA.header(DeadLetterHeader.code) == "unknown_version")
        #expect(googleEntryA.header(DeadLetterHeader.replayable) == "true")
        #expect(garbageEntry.header(DeadLetterHeader.code) == "not_json")
        #expect(garbageEntry.header(DeadLetterHeader.replayable) == "false")
        #expect(googleEntryA.value == poisons[1], "a live request is kept byte for byte for its replay")
        let secrets = try [apple, googleA, googleB, googleC].map { try RequestSecrets($0.value) }
        for entry in dlq {
            for header in entry.headers where header.key.hasPrefix("dlq.") {
                #expect(secrets.allSatisfy { $0.leaked(in: header.value ?? []).isEmpty }, "\(header.key) quotes the message")
            }
        }

        // dlq list: an aligned table, and --json.
        let list = try await tool.dlq(["list"])
        #expect(list.status == 0, "\(list)")
        let table = DLQListing(table: list.standardOutput)
        #expect(table.misaligned.isEmpty, "\(table.misaligned)\n\(list.output)")
        #expect(table.rows.compactMap { $0["ID"] } == [appleEntry, googleEntryA, googleEntryB, googleEntryC, garbageEntry].map(\.identifier),
                "oldest first")
        #expect(table.rows.map { $0["CODE"] } == ["unknown_version", "unknown_version", "unknown_version", "unknown_version", "not_json"])
        #expect(table.rows.map { $0["PROGRAM"] } == ["demo-gnosis", "demo-imprint", "demo-imprint", "demo-imprint", "-"])
        #expect(table.rows.map { $0["WALLET"] } == ["apple_pay", "google_wallet", "google_wallet", "google_wallet", "-"])
        #expect(table.rows.dropFirst().map { $0["REPLAYABLE"] } == ["yes", "yes", "yes", "no"])
        #expect(table.rows.map { $0["REQUEST"] } == [apple.requestID, googleA.requestID, googleB.requestID, googleC.requestID, "-"])
        #expect(table.rows.allSatisfy { $0["AGE"]?.hasSuffix("s") == true })
        #expect(table.footer == "5 dead letter(s) in \(topics.deadLetters)")
        let listJSON = try await tool.dlq(["list", "--json"])
        #expect(listJSON.status == 0, "\(listJSON)")
        let listed = try DLQListing.entries(json: listJSON.standardOutput)
        #expect(listed.compactMap { $0["id"]?.stringValue } == table.rows.compactMap { $0["ID"] })
        #expect(listed.compactMap { $0["code"]?.stringValue } == ["unknown_version", "unknown_version", "unknown_version", "unknown_version", "not_json"])
        #expect(listed.last?["replayable"]?.boolValue == false)
        #expect(listed[1]["replayable"]?.boolValue == true)
        #expect(listed[1]["original"]?.stringValue == "\(topics.requests):\(reports[1].partition):\(reports[1].offset)")
        #expect(secrets.allSatisfy { $0.leaked(in: list.everything + listJSON.everything).isEmpty })

        // dlq show: provenance, and the value with every secret and raw id redacted.
        for arguments in [["show", appleEntry.identifier], ["show", appleEntry.identifier, "--json"],
                          ["show", "--request-id", googleA.requestID], ["show", "--request-id", googleA.requestID, "--json"]] {
            let show = try await tool.dlq(arguments)
            #expect(show.status == 0, "\(show)")
            #expect(show.output.contains("dlq.replayable_reason"), "\(show)")
            #expect(show.output.contains("<redacted>"))
            #expect(show.output.contains(arguments.contains(googleA.requestID) ? googleA.requestID : apple.requestID))
            for (index, secret) in secrets.enumerated() {
                #expect(secret.leaked(in: show.everything).isEmpty, "request \(index) leaks through '\(arguments.joined(separator: " "))'")
            }
        }
        let unknown = try await tool.dlq(["show", "\(topics.deadLetters):0:999999"])
        #expect(unknown.status != 0)

        // Filters (each with --json so the ids can be compared).
        func filtered(_ arguments: [String]) async throws -> [String] {
            let run = try await tool.dlq(["list", "--json"] + arguments)
            #expect(run.status == 0, "\(run)")
            return try DLQListing.ids(json: run.standardOutput)
        }
        let googleFailedAt = try #require(googleEntryA.provenance?.failedAtMs)
        let garbageFailedAt = try #require(garbageEntry.provenance?.failedAtMs)
        #expect(try await filtered(["--code", "not_json"]) == [garbageEntry.identifier])
        #expect(try await filtered(["--program", "demo-gnosis"]) == [appleEntry.identifier])
        #expect(try await filtered(["--wallet", "google_wallet"]) == [googleEntryA, googleEntryB, googleEntryC].map(\.identifier))
        #expect(try await filtered(["--request-id", googleB.requestID]) == [googleEntryB.identifier])
        #expect(try await filtered(["--code", "unknown_version", "--limit", "2"]) == [googleEntryB.identifier, googleEntryC.identifier],
                "the newest two, oldest first")
        #expect(try await filtered(["--since", "1h"]).count == 5)
        #expect(try await filtered(["--since", RFC3339.format(milliseconds: googleFailedAt),
                                    "--until", RFC3339.format(milliseconds: garbageFailedAt)])
                == [googleEntryA, googleEntryB, googleEntryC].map(\.identifier))
        #expect(try await filtered(["--until", RFC3339.format(milliseconds: googleFailedAt)]) == [appleEntry.identifier])
        #expect(try await filtered(["--program", "demo-imprint", "--code", "not_json"]).isEmpty)
        let badWallet = try await tool.dlq(["list", "--wallet", "paypal"])
        #expect(badWallet.status == 2, "a usage error: \(badWallet)")

        // A dry run changes nothing anywhere.
        let watched = [topics.requests, topics.deadLetters, topics.parked, topics.audit]
        let before = try watched.map { try rig.endOffsets($0) }
        let dryRun = try await tool.dlq(["replay", "--dry-run", "--operator", "ops.bob"])
        #expect(dryRun.status == 1, "the malformed entry is refused, so not everything would replay: \(dryRun)")
        #expect(dryRun.standardOutput.contains { $0.contains(googleEntryA.identifier) && $0.contains("would replay") }, "\(dryRun)")
        #expect(dryRun.standardOutput.contains { $0.contains(garbageEntry.identifier) && $0.contains("refused") && $0.contains("malformed") },
                "\(dryRun)")
        #expect(dryRun.output.contains("dry run: nothing produced"))
        #expect(try watched.map { try rig.endOffsets($0) } == before, "a dry run produced something")

        // Replay the three Google entries at 4 per second: the worker still cannot read version 2,
        // so each lands in the parked topic, with x-replay-of, and goes nowhere else.
        let replay = try await tool.dlq(["replay", "--code", "unknown_version", "--wallet", "google_wallet", "--rate", "4", "--operator", "ops.bob"])
        #expect(replay.status == 0, "\(replay)")
        #expect(replay.output.contains("3 of 3 replayed"), "\(replay)")
        snapshot = try await rig.wait(for: "the three replays to be parked and audited") { snapshot in
            snapshot.deadLetters.filter { $0.topic == topics.parked }.count == 3
                && snapshot.audit.filter { $0.stage == .replayed }.count == 3
        }
        let parked = snapshot.deadLetters.filter { $0.topic == topics.parked }
        #expect(Set(parked.compactMap(\.replayOf)) == Set([googleEntryA, googleEntryB, googleEntryC].map(\.identifier)))
        #expect(parked.allSatisfy { $0.provenance?.isReplayable == false && $0.provenance?.code == DeadLetterCode(.unknownVersion) })
        #expect(parked.allSatisfy { $0.provenance?.originalTopic == topics.requests })
        #expect(Set(parked.compactMap(\.summary.requestID)) == [googleA.requestID, googleB.requestID, googleC.requestID])
        let replayedAudit = snapshot.audit.filter { $0.stage == .replayed }
        #expect(replayedAudit.allSatisfy { $0.operator == "ops.bob" })
        #expect(Set(replayedAudit.compactMap(\.requestID)) == [googleA.requestID, googleB.requestID, googleC.requestID])
        // Exactly three records were re-produced, spaced by the rate, each marked as a replay.
        let replays = try await KafkaTestReader(bootstrapServers: rig.bootstrap).readExisting(topic: topics.requests)
            .filter { $0.header(DeadLetterHeader.replayOf) != nil }
        try #require(replays.count == 3)
        let stamps = replays.compactMap(\.timestampMs).sorted()
        try #require(stamps.count == 3)
        // (The first send also pays for the tool's producer start-up: measure the steady gap.)
        #expect(stamps[2] - stamps[1] >= 240, "--rate 4 spaces sends by 250 ms; they were \(stamps[2] - stamps[1]) ms apart")
        #expect(try rig.endOffsets(topics.requests).values.reduce(0, +) == before[0].values.reduce(0, +) + 3)
        #expect(rig.collector.snapshot.deadLetters.filter { $0.topic == topics.deadLetters }.count == 5, "nothing came back to the DLQ")

        let listParked = try await tool.dlq(["list", "--parked", "--json"])
        #expect(listParked.status == 0, "\(listParked)")
        #expect(Set(try DLQListing.ids(json: listParked.standardOutput)) == Set(parked.map(\.identifier)))

        // The parked entry shows where it came from, and cannot be replayed again.
        let parkedEntry = try #require(parked.first { $0.replayOf == googleEntryA.identifier })
        let showParked = try await tool.dlq(["show", "--parked", parkedEntry.identifier])
        #expect(showParked.status == 0, "\(showParked)")
        #expect(showParked.standardOutput.contains { $0.contains(DeadLetterHeader.replayOf) && $0.contains(googleEntryA.identifier) }, "\(showParked)")
        let replayParked = try await tool.dlq(["replay", "--parked", "--request-id", googleA.requestID, "--operator", "ops.bob"])
        #expect(replayParked.status != 0)
        #expect(replayParked.output.contains("refused") && replayParked.output.contains("parked"), "\(replayParked)")
        // After all that, still exactly three parked and five dead letters: nothing loops. Read
        // once the worker has finished every request on the topic (committed to its end: a record
        // is finished only when its outputs are acknowledged), from the topics' end offsets rather
        // than from what the collector happened to have read.
        let behind = try await rig.waitForRequestsCommitted()
        #expect(behind.isEmpty, "requests partitions not committed to their end: \(behind)")
        #expect(try rig.endOffsets(topics.parked).values.reduce(0, +) == 3)
        #expect(try rig.endOffsets(topics.deadLetters).values.reduce(0, +) == 5)
        let settled = rig.collector.snapshot
        #expect(settled.deadLetters.filter { $0.topic == topics.parked }.count == 3)
        #expect(settled.deadLetters.filter { $0.topic == topics.deadLetters }.count == 5)
    }
}
