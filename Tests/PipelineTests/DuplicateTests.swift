import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing

/// A message delivered twice is answered once, and a nonce reused by a
/// new request is rejected without reaching the issuer a second time.
@Suite("End to end: duplicates and nonce reuse", .serialized, .timeLimit(.minutes(10)))
struct DuplicateTests {
    @Test("the same message produced twice gets one result and a duplicate_ignored audit event")
    func sameMessageTwice() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try rig.startWorker()
        try rig.formGroupAndWarmUp()

        // A copy arriving while the original's call is in flight, and a copy arriving after the
        // original was answered; each followed by a request for the same card, so its answer
        // proves the copy was handled (one key: one partition, in order).
        let inFlightCard = "pm_dup_\(Crypto.hex(Crypto.randomBytes(4)))-slow-500"
        let inFlight = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: inFlightCard)
        let inFlightSentinel = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: inFlightCard)
        try rig.send(inFlight)
        try rig.send(inFlight)
        try rig.send(inFlightSentinel)

        let answeredCard = "pm_dup_\(Crypto.hex(Crypto.randomBytes(4)))"
        let answered = try rig.factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: answeredCard, opcRequested: false)
        let answeredSentinel = try rig.factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: answeredCard, opcRequested: false)
        try rig.send(answered)
        try #require(rig.waitForFinals([answered.requestID]))
        try rig.send(answered)
        try rig.send(answeredSentinel)

        let ids = [inFlight.requestID, inFlightSentinel.requestID, answered.requestID, answeredSentinel.requestID]
        try #require(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")
        try rig.expectQuiet()
        let audited = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            [inFlight.requestID, answered.requestID].allSatisfy { id in
                snapshot.audit.contains { $0.requestID == id && $0.stage == .duplicateIgnored }
            }
        }
        #expect(audited, "no duplicate_ignored audit event for a copy")

        let snapshot = rig.collector.snapshot
        for id in ids {
            #expect(snapshot.results[id]?.count == 1, "\(id): \(snapshot.results[id]?.count ?? 0) results")
            #expect(snapshot.final(id)?.status == .provisioned)
        }
        for request in [inFlight, answered] {
            #expect(rig.audit(request.requestID, .duplicateIgnored).count == 1)
            #expect(rig.audit(request.requestID, .issuerCallStarted).count == 1, "the copy reached the issuer")
            let calls = rig.stack.simulator.calls.filter { $0.handshake == request.handshake }
            #expect(calls.map(\.count) == [1], "simulator calls for the request's handshake: \(calls)")
        }
        #expect(rig.metrics(of: rig.workers[0].worker)?.total("provisioner_duplicates_ignored_total") == 2)
    }

    @Test("a nonce reused by a new request_id is rejected nonce_reused without a second issuer call")
    func nonceReuseIsRejected() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try rig.startWorker()
        try rig.formGroupAndWarmUp()

        for program in ["demo-imprint", "demo-gnosis", "demo-dcs"] {
            let cardID = "pm_nonce_\(Crypto.hex(Crypto.randomBytes(4)))"
            let original = try rig.factory.provision(program: program, wallet: .applePay, cardID: cardID)
            var reuse = original
            reuse.requestID = rig.factory.requestID("reuse")
            reuse.value = Array(String(decoding: original.value, as: UTF8.self)
                .replacingOccurrences(of: original.requestID, with: reuse.requestID).utf8)
            // Another card, so nothing but the nonce ties the copy to the original.
            var otherCard = reuse
            otherCard.requestID = rig.factory.requestID("reuse-other-card")
            let otherCardID = "pm_nonce_other_\(Crypto.hex(Crypto.randomBytes(4)))"
            otherCard.value = Array(String(decoding: original.value, as: UTF8.self)
                .replacingOccurrences(of: original.requestID, with: otherCard.requestID)
                .replacingOccurrences(of: cardID, with: otherCardID).utf8)
            otherCard.key = Array(otherCardID.utf8)

            try rig.send(original)
            try #require(rig.waitForFinals([original.requestID]))
            try rig.send(reuse)
            try rig.send(otherCard)
            let ids = [original.requestID, reuse.requestID, otherCard.requestID]
            try #require(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")

            let snapshot = rig.collector.snapshot
            #expect(snapshot.final(original.requestID)?.status == .provisioned, "\(program): original not provisioned")
            for copy in [reuse, otherCard] {
                let result = try #require(snapshot.final(copy.requestID))
                #expect(result.status == .rejected && result.code == .nonceReused,
                        "\(program): \(result.status.rawValue) / \(result.code?.rawValue ?? "-")")
                #expect(result.nextAction == .restartWalletFlow)
                #expect(rig.audit(copy.requestID, .issuerCallStarted).isEmpty, "\(program): the copy reached the issuer")
            }
            let calls = rig.stack.simulator.calls.filter { $0.handshake == original.handshake }
            #expect(calls.map(\.count) == [1], "\(program): simulator calls for the nonce: \(calls)")
            #expect(rig.simulatorCalls(card: otherCardID).isEmpty)
        }
        try rig.expectQuiet()
    }
}
