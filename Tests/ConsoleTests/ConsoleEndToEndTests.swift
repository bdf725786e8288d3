@testable import Console
import Contract
import Foundation
import Kafka
import Observability
import Recovery
import Testing
import TestSupport

/// The console against a real worker, broker and simulator, over HTTP: every page and stream,
/// a dry run and a rate-limited replay whose results appear on Kafka with `replayed` audit events
/// naming the operator, a trace, and the canary scan of everything sent.
@Suite("Console end to end: pages, replay, trace, canaries", .serialized, .timeLimit(.minutes(10)))
struct ConsoleEndToEndTests {
    @Test("every page and stream, a dry run, a replay at a rate, a trace; no canary secret in anything sent or logged")
    func pagesReplayTraceAndCanaries() async throws {
        let rig = try ConsoleStackRig(replayableCount: 4, name: "console-e2e")
        defer { rig.stop() }
        #expect(rig.waitForWorkerDeadLetters(), "the worker dead-lettered the undecodable requests")
        let browser = ConsoleClient(base: rig.baseURL)
        #expect(try await browser.login(ConsoleStackRig.aliceToken) == 303)

        // Overview and its stream move with load.
        rig.startLoad(intervalMs: 50)
        var moved = false
        var first: String?
        for _ in 0..<60 where !moved {
            let event = try await browser.get("/events/overview?once=1")
            #expect(event.status == 200 && event.headers.contains { $0.name.lowercased() == "content-type" && $0.value.hasPrefix("text/event-stream") })
            let total = event.body.range(of: "\"requests_total\":\"").map { String(event.body[$0.upperBound...].prefix { $0 != "\"" }) }
            if let total, total != "–" {
                if let first, first != total { moved = true }
                first = first ?? total
            }
            try await Task.sleep(for: .milliseconds(500))
        }
        // The stream itself: one open response carrying an update after every scrape (1 s here).
        let streamed = try await RawEventReader.read(port: rig.server.port, path: "/events/overview", session: try #require(browser.session),
                                                     events: 3, timeoutMs: 20_000)
        #expect(streamed.components(separatedBy: "event: update").count - 1 >= 3, "three updates on one connection: \(streamed.suffix(300))")
        browser.record(streamed)
        rig.stopLoad()
        #expect(moved, "requests_total moved while the load ran")
        let overview = try await browser.get("/")
        #expect(overview.body.contains("id=\"requests_per_second\"") && overview.body.contains("<polyline id=\"chart_requests\""))

        let lag = try await browser.get("/lag")
        #expect(lag.status == 200 && lag.body.contains(rig.group) && lag.body.contains("lag-\(rig.stack.topics.requests)"))
        // The worker group's commits show (read by OffsetFetch, with a consumer of its own that never joins):
        // each row of the page is at or behind what an independent read finds a moment later.
        let table = try #require(lag.body.components(separatedBy: "id=\"lag-\(rig.stack.topics.requests)\"").last?
            .components(separatedBy: "</table>").first)
        let cells = try NSRegularExpression(pattern: "<tr><td>(\\d+)</td><td>(\\d+|none)</td><td>(\\d+)</td><td>(\\d+)</td><td id=\"client-lag-[^\"]+\">[^<]+</td><td id=\"fetch-state-[^\"]+\">[^<]+</td><td id=\"paused-[^\"]+\">(no|paused by [^<]+)</td></tr>")
        let shown = cells.matches(in: table, range: NSRange(table.startIndex..., in: table)).map { match in
            (1...4).map { String(table[Range(match.range(at: $0), in: table)!]) }
        }
        let rows = try LagReader(properties: rig.stack.consumerProperties, groupID: rig.group).read([rig.stack.topics.requests])
        #expect(shown.count == rig.stack.partitions, "\(shown)")
        #expect(shown.contains { Int64($0[1]) ?? 0 > 0 }, "the worker's commits are shown: \(shown)")
        for row in shown {
            let now = try #require(rows.first { String($0.partition) == row[0] })
            #expect((Int64(row[1]) ?? 0) <= (now.committed ?? 0) && (Int64(row[2]) ?? 0) <= now.end, "\(row) vs \(now)")
        }
        #expect(rig.worker.assignedPartitionCount == rig.stack.partitions, "the worker kept its partitions: the console never joined its group")

        // Dead letters with the CLI's filters.
        let all = try await browser.get("/dead-letters")
        #expect(all.body.contains("6 in \(rig.stack.topics.deadLetters)"), "4 seeded + 2 from the worker")
        let filtered = try await browser.get("/dead-letters?code=publish_failed")
        #expect(filtered.body.contains("4 in \(rig.stack.topics.deadLetters)"))
        let one = try await browser.get("/dead-letters?request-id=\(rig.replayable[0].requestID)")
        #expect(one.body.contains("1 in "))
        let bad = try await browser.get("/dead-letters?since=yesterday")
        #expect(bad.status == 400 && bad.body.contains("--since must be RFC 3339"))
        // Every detail view, redacted exactly as `dlq show`.
        let store = DeadLetterStore(properties: rig.stack.consumerProperties)
        let entries = try store.entries(topic: rig.stack.topics.deadLetters)
        for listed in entries {
            // Listings hold summaries; the whole letter is read again by its offset, as the page does.
            let reference = try #require(ReplayReference(listed.identifier))
            let entry = try #require(try store.letter(reference))
            #expect(entry.value != nil && !entry.isSummary)
            let detail = try await browser.get("/dead-letters/entry?id=\(entry.identifier)")
            #expect(detail.status == 200)
            let expected = DeadLetterView.redactedValue(entry).replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            #expect(detail.body.contains(expected), "\(entry.identifier)")
        }

        // Dry run of everything: 4 would be replayed, 2 refused with the policy's reason.
        let preview = try await browser.post("/dead-letters/preview", [])
        #expect(preview.status == 200 && preview.body.contains("4 of 6 would be replayed; 2 refused"))
        #expect(preview.body.contains("the message itself is malformed"))
        let selection = try #require(ConsoleClient.field("selection", in: preview.body), "the preview binds its selection")
        // Without CSRF: refused.
        #expect(try await browser.post("/dead-letters/replay", [("rate", "2"), ("confirm", "REPLAY 4"), ("expected", "4"), ("selection", selection)],
                                       withCSRF: false).status == 403)
        // A wrong confirmation: refused, nothing produced.
        #expect(try await browser.post("/dead-letters/replay", [("rate", "2"), ("confirm", "yes"), ("expected", "4"), ("selection", selection)]).status == 400)
        // The confirmation binds the set previewed, not its size. One entry
        // previewed, another entry of the same count posted with that preview's confirmation: refused.
        let previewOne = try await browser.post("/dead-letters/preview", [("request-id", rig.replayable[0].requestID)])
        let selectionOne = try #require(ConsoleClient.field("selection", in: previewOne.body))
        let swapped = try await browser.post("/dead-letters/replay", [("request-id", rig.replayable[1].requestID), ("rate", "2"),
                                                                    ("confirm", "REPLAY 1"), ("expected", "1"), ("selection", selectionOne)])
        #expect(swapped.status == 409 && swapped.body.contains("the selection changed since the preview"), "\(swapped.status)")
        // The replay at 2 per second.
        let started = Timestamps.nowMs()
        let replay = try await browser.post("/dead-letters/replay", [("code", "publish_failed"), ("rate", "2"), ("confirm", "REPLAY 4"), ("expected", "4"),
                                                                   ("selection", selection)])
        #expect(replay.status == 303)
        let location = try #require(replay.location)
        var finished = false
        for _ in 0..<120 where !finished {
            let event = try await browser.get(location.replacingOccurrences(of: "/dead-letters/job", with: "/events/job") + "&once=1")
            finished = event.body.contains("\"done\":true")
            if !finished { try await Task.sleep(for: .milliseconds(250)) }
        }
        let elapsed = Timestamps.nowMs() - started
        #expect(finished)
        #expect(elapsed >= 1_400, "4 replays at 2/s take at least 1.5 s; took \(elapsed) ms")
        let job = try await browser.get(location)
        #expect(job.body.components(separatedBy: ">replayed<").count - 1 == 4, "each entry's outcome")

        // The replayed requests' results on Kafka, and their `replayed` audit events naming alice.
        let ids = Set(rig.replayable.map(\.requestID))
        let reader = KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers)
        let results = try await reader.read(topic: rig.stack.topics.results, timeout: .seconds(60)) { messages in
            Set(messages.compactMap { try? ProvisioningResult.decode($0.value) }.filter { $0.isFinal }.map(\.requestID)).isSuperset(of: ids)
        }
        #expect(!results.isEmpty)
        let audit = try await reader.read(topic: rig.stack.topics.audit, timeout: .seconds(30)) { messages in
            messages.compactMap { try? AuditEvent.decode($0.value) }.filter { $0.stage == .replayed && ids.contains($0.requestID ?? "") }.count >= 4
        }
        let replayedEvents = audit.compactMap { try? AuditEvent.decode($0.value) }.filter { $0.stage == .replayed && ids.contains($0.requestID ?? "") }
        #expect(replayedEvents.allSatisfy { $0.operator == "alice" })
        #expect(rig.logs.renderedLines.contains { $0.contains("replay started") && $0.contains("alice") })

        // The trace of one replayed request: its timeline, results, dead letter and replay by alice.
        let traced = rig.replayable[0].requestID
        let trace = try await browser.get("/trace?q=\(traced)")
        #expect(trace.body.contains("Request \(traced)") && trace.body.contains(">replayed<") && trace.body.contains(">alice<"))
        #expect(trace.body.contains(">result_published<") && trace.body.contains(">publish_failed<"))
        let finalStatus = try #require(results.compactMap { try? ProvisioningResult.decode($0.value) }.last { $0.requestID == traced && $0.isFinal })
        #expect(trace.body.contains("id=\"results-\(traced)\"") && trace.body.contains(">\(finalStatus.status.rawValue)<")
            && trace.body.contains(">\(finalStatus.nextAction.rawValue)<"))
        // By card_ref (the audit pseudonym of the card): the card's requests, each traced.
        let cardRef = try #require(replayedEvents.first { $0.requestID == traced }.flatMap { _ in
            audit.compactMap { try? AuditEvent.decode($0.value) }.first { $0.requestID == traced && $0.cardRef != nil }?.cardRef?.hex })
        let byCard = try await browser.get("/trace?q=\(cardRef)")
        #expect(byCard.body.contains("card_ref \(cardRef): 1 request(s)") && byCard.body.contains("Request \(traced)"))
        #expect(try await browser.get("/trace?q=%3Cscript%3E").status == 400)
        _ = try await browser.get("/dead-letters?parked=1")

        // The canary scan: every body sent to this client and every line the console logged.
        var leaks: [String] = []
        for body in browser.seen { leaks += rig.leaks(in: body) }
        for line in rig.logs.renderedLines { leaks += rig.leaks(in: line) }
        #expect(leaks.isEmpty, "canaries found: \(Set(leaks).count)")
        #expect(rig.canaries.count >= 12, "canaries in play: \(rig.canaries.count)")
        // Control: the scan finds the secrets where they are (the dead letters' raw values, base64 of a token).
        #expect(!rig.leaks(in: String(decoding: rig.replayable[0].value, as: UTF8.self)).isEmpty)
        #expect(!rig.leaks(in: "x" + Crypto.base64Encode(Array("ab\(ConsoleStackRig.aliceToken)".utf8))).isEmpty)
    }
}
