import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing

extension RecoveryTests {
    // MARK: - 5. Reconciliation that never learns the truth

    @Test("exhausted reconciliation: final check_wallet + replayable reconcile_exhausted; a failing replay is parked; a replay after the fix finds the truth")
    func exhaustedReconciliationIsReplayable() async throws {
        let rig = try RecoveryRig(tiersMs: [300, 600, 1200])
        let gateway = try IssuerGateway(upstream: rig.stack.simulatorURL)
        defer { gateway.stop() }
        defer { rig.stop() }
        let clock = SteppedClock()
        try rig.startWorker(try rig.configuration { $0.programs["demo-imprint"]?.baseURL = gateway.url + "/imprint" }, clock: clock.now)
        let topics = rig.topics
        let tool = rig.operatorTool

        // The issuer applies the call and answers 504; its state API is down from then on.
        gateway.stateAPIDown = true
        let card = Self.card("-timeout-applied")
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card)
        let id = request.requestID
        try await rig.send(request)

        var snapshot = try await rig.wait(for: "the reconcile_exhausted dead letter of \(id)") {
            !$0.deadLetters(id, topic: topics.deadLetters).isEmpty && $0.stages(id).contains(.deadLettered) && $0.final(id) != nil
        }
        #expect(gateway.refusedStateQueries == 3, "one state query per tier")
        let results = snapshot.all(id)
        try #require(results.count == 2, "\(results.map(\.status))")
        #expect(results[0].status == .indeterminate && !results[0].isFinal)
        let gaveUp = results[1]
        #expect(gaveUp.isFinal)
        #expect(gaveUp.status == .indeterminate)
        #expect(gaveUp.nextAction == .checkWallet)
        #expect(gaveUp.code == .issuerUnavailable)
        let stages = snapshot.stages(id)
        #expect(stages.filter { $0 == .reconcileScheduled }.count == 3, "\(stages)")
        #expect(!stages.contains(.reconciled))

        let entries = snapshot.deadLetters(id, topic: topics.deadLetters)
        try #require(entries.count == 1)
        let entry = entries[0]
        let provenance = try #require(entry.provenance)
        let names = Set(entry.headers.map(\.key))
        #expect(DeadLetterHeader.provenance.allSatisfy(names.contains), "\(names)")
        #expect(provenance.code == .reconcileExhausted)
        #expect(provenance.originalTopic == topics.reconcile)
        #expect(provenance.attempts == 3)
        #expect(provenance.isReplayable, "\(provenance.replayableReason)")
        #expect(provenance.group == rig.group + ".reconcile")
        let job = try #require(ReconcileJob.decode(entry.value ?? []), "the dead letter holds the reconciliation job")
        #expect(job.requestID == id)
        #expect(job.attempt == 1, "a replay starts the tiers again")
        #expect(try RequestSecrets(request.value).leaked(in: entry.value ?? []) == [card],
                "a job carries the card id its state query needs, and no handshake secret")

        let show = try await tool.dlq(["show", entry.identifier])
        #expect(show.status == 0, "\(show)")
        #expect(show.output.contains("reconcile_exhausted"))
        #expect(!show.everything.contains(card), "the job's card id is redacted: \(show)")

        // A replay while the state API is still down fails again: parked, never looped.
        let stillDown = try await tool.dlq(["replay", "--request-id", id, "--operator", "ops.alice"])
        #expect(stillDown.status == 0, "\(stillDown)")
        snapshot = try await rig.wait(for: "the replayed job of \(id) to be parked") {
            !$0.deadLetters(id, topic: topics.parked).isEmpty && $0.all(id).count >= 3
        }
        let parked = snapshot.deadLetters(id, topic: topics.parked)
        try #require(parked.count == 1)
        #expect(parked[0].replayOf == entry.identifier)
        #expect(parked[0].provenance?.isReplayable == false)
        #expect(parked[0].provenance?.code == .reconcileExhausted)
        #expect(snapshot.deadLetters(id, topic: topics.deadLetters).count == 1, "the failed replay did not come back to the DLQ")
        #expect(gateway.refusedStateQueries == 6)
        let afterReplay = try #require(snapshot.results[id])
        try #require(afterReplay.count == 3, "the replay that failed again answered check_wallet once more")
        #expect(afterReplay[2].result.nextAction == .checkWallet && afterReplay[2].result.isFinal)
        #expect(afterReplay[2].headers.last { $0.key == DeadLetterHeader.replayOf }?.text == entry.identifier)

        // The fix. Production tiers (2 s … 5 min) end long after an Apple Pay window (20 s) has
        // closed, so the operator's replay comes after it too: the worker's clock is stepped past
        // the window's end (on the worker's clock) instead of waiting for it.
        gateway.stateAPIDown = false
        let windowClosed = max(results[0].timing.deadlineMs ?? 0, (provenance.originalTimestampMs ?? 0) + 20_000) + 500
        clock.step(max(0, windowClosed - clock.now()))
        let fixed = try await tool.dlq(["replay", "--request-id", id, "--code", "reconcile_exhausted", "--operator", "ops.alice"])
        #expect(fixed.status == 0, "\(fixed)")
        snapshot = try await rig.wait(for: "the truthful result of \(id)") { snapshot in
            snapshot.all(id).contains { $0.status == .provisioned } && snapshot.stages(id).filter { $0 == .replayed }.count == 2
        }
        let received = try #require(snapshot.results[id]?.first { $0.result.status == .provisioned })
        #expect(received.result.isFinal)
        #expect(received.result.nextAction == .checkWallet)
        #expect(received.headers.last { $0.key == DeadLetterHeader.replayOf }?.text == entry.identifier,
                "the result of a replay carries x-replay-of")
        let replayed = snapshot.audit.filter { $0.requestID == id && $0.stage == .replayed }
        #expect(replayed.count == 2)
        #expect(replayed.allSatisfy { $0.operator == "ops.alice" })
        #expect(snapshot.deadLetters(id, topic: topics.deadLetters).count == 1)
        #expect(snapshot.deadLetters(id, topic: topics.parked).count == 1)
        #expect(Self.calls(rig, handshake: request.handshake) == 1, "replays ask for the state; they never call provisioning again")
    }
}
