import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing

extension RecoveryTests {
    // MARK: - 8. A replay whose worker died during its issuer call

    /// Two operator replays (`x-replay-of`) of dead-lettered requests. The original of each has a
    /// `completed` marker (it was dead-lettered). One replay had reached its issuer call when its
    /// worker died (its own `started` marker exists); the other never started. The started replay
    /// is reconciled, never sent to the issuer again; the other is called as a fresh replay: the
    /// original's `completed` marker does not make it a duplicate.
    @Test("a replay redelivered after its call started is reconciled, not called again; a fresh replay is called")
    func replayInterruptedByCrashIsReconciled() async throws {
        let rig = try RecoveryRig(partitions: 1)
        defer { rig.stop() }
        let topics = rig.topics

        let interrupted = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card("-replay-started"))
        let fresh = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card("-replay-fresh"))
        let replays = [(interrupted, "provisioning.dlq:0:41"), (fresh, "provisioning.dlq:0:42")]
        for (request, deadLetter) in replays {
            let placed = try await rig.send(request, headers: [KafkaHeader(key: "x-replay-of", string: deadLetter)])
            // The original was dead-lettered after its call had started.
            try await rig.send(Self.marker(request.requestID, state: "started", requestOffset: placed.offset, outcome: nil),
                               key: Array(request.requestID.utf8), topic: topics.markers)
            try await rig.send(Self.marker(request.requestID, state: "completed", requestOffset: placed.offset, outcome: "dead_lettered"),
                               key: Array(request.requestID.utf8), topic: topics.markers)
        }
        // The first replay's worker wrote its own `started` marker, then died.
        let replayStarted = Self.marker(interrupted.requestID, state: "started", requestOffset: 0, outcome: nil, replayOf: replays[0].1)
        try await rig.send(replayStarted, key: Array(interrupted.requestID.utf8), topic: topics.markers)

        let clock = SteppedClock()
        try rig.startWorker(try rig.configuration(), clock: clock.now)
        // The started replay is given up at its deadline (a 20 s Apple Pay window): once its interim
        // answer and the fresh replay's final are out, the worker's clock is stepped past it.
        let early = try await rig.wait(for: "the interim of the interrupted replay and the fresh replay's final") { snapshot in
            !snapshot.all(interrupted.requestID).isEmpty && snapshot.final(fresh.requestID) != nil
        }
        if let deadlineMs = early.all(interrupted.requestID).first?.timing.deadlineMs { clock.step(max(0, deadlineMs + 500 - clock.now())) }
        let snapshot = try await rig.wait(for: "final results of both replays") { snapshot in
            snapshot.final(interrupted.requestID) != nil && snapshot.final(fresh.requestID) != nil
        }

        let handshakes = Set(rig.stack.simulator.calls.map(\.handshake))
        #expect(!handshakes.contains(try #require(interrupted.handshake)), "the interrupted replay was sent to the issuer again")
        let interim = snapshot.all(interrupted.requestID).first { !$0.isFinal }
        #expect(interim?.message.contains("a previous worker started this issuer call") == true,
                "\(snapshot.all(interrupted.requestID).map(\.message))")
        #expect(snapshot.final(interrupted.requestID)?.status != .provisioned, "the issuer never applied it; reconciliation says so")

        #expect(handshakes.contains(try #require(fresh.handshake)), "the fresh replay was not called")
        #expect(snapshot.final(fresh.requestID)?.status == .provisioned, "\(snapshot.all(fresh.requestID).map(\.status))")
        #expect(!snapshot.stages(fresh.requestID).contains(.duplicateIgnored), "\(snapshot.stages(fresh.requestID))")
    }
}
