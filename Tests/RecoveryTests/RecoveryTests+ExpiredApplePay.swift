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
    // MARK: - 7. Apple Pay past its deadline

    @Test("Apple Pay past its deadline: stored stripped, dlq.replayable false, and dlq replay refuses it saying why")
    func expiredApplePayIsStrippedAndRefused() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration())
        let topics = rig.topics
        let tool = rig.operatorTool

        // Handed over by the wallet a minute ago, on a schema this worker cannot read.
        let card = Self.card()
        let expired = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card,
                                                startedAtMs: Timestamps.nowMs() - 60_000)
        // And one whose window closes shortly after it is dead-lettered.
        let closesAt = Timestamps.nowMs() + 2_500
        let closing = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card(), deadlineMs: closesAt)
        try await rig.send(try PoisonMessage.withVersion(2, expired.value), key: expired.key)
        try await rig.send(try PoisonMessage.withVersion(2, closing.value), key: closing.key)
        let snapshot = try await rig.wait(for: "both dead letters") {
            !$0.deadLetters(expired.requestID, topic: topics.deadLetters).isEmpty && !$0.deadLetters(closing.requestID, topic: topics.deadLetters).isEmpty
        }
        let entry = try #require(snapshot.deadLetters(expired.requestID, topic: topics.deadLetters).first)
        #expect(entry.header(DeadLetterHeader.replayable) == "false")
        #expect(entry.header(DeadLetterHeader.replayableReason)?.contains("Apple Pay window closed") == true)
        let stored = try JSONParser().parse(entry.value ?? [])
        let storedApple = try #require(stored["apple"])
        for member in ["certificates", "nonce", "nonce_signature"] { #expect(storedApple[member] == nil, "\(member) kept") }
        #expect(storedApple["device_type"]?.stringValue == "iphone", "the rest of the request is kept")
        #expect(stored["request_id"]?.stringValue == expired.requestID)
        let leaked = try RequestSecrets(expired.value).leaked(in: entry.value ?? [])
        #expect(leaked.sorted() == [card, "u_\(card)"].sorted(), "only the card and user ids a replay would need remain")

        // The operator tool says no, and why; nothing is produced. (The second window must have
        // closed: this waits for the clock, not for an event.)
        try await Task.sleep(for: .milliseconds(max(0, closesAt + 200 - Timestamps.nowMs())))
        let before = try rig.endOffsets(topics.requests)
        let audit = try rig.endOffsets(topics.audit)
        for request in [expired, closing] {
            let replay = try await tool.dlq(["replay", "--request-id", request.requestID, "--operator", "ops.dave"])
            #expect(replay.status != 0, "\(replay)")
            #expect(replay.output.contains("refused"), "\(replay)")
            #expect(replay.output.contains("Apple Pay window closed"), "the refusal names the reason: \(replay)")
        }
        #expect(try rig.endOffsets(topics.requests) == before)
        #expect(try rig.endOffsets(topics.audit) == audit, "no replayed audit event for a refused replay")
        let list = try await tool.dlq(["list", "--wallet", "apple_pay"])
        let rows = DLQListing(table: list.standardOutput).rows
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0["REPLAYABLE"] == "no" }, "\(list)")
        let show = try await tool.dlq(["show", entry.identifier])
        #expect(show.output.contains("certificates, nonce and signature were stripped"), "\(show)")
    }
}
