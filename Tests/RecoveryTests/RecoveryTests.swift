import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Simulator
import Testing

/// Reconciliation and dead letters end to end: the embedded broker, the issuer simulator over
/// real HTTP, real workers, and the built `provisioner dlq` tool as a child process.
@Suite("Recovery end to end: reconciliation, dead letters, the dlq operator loop", .serialized, .timeLimit(.minutes(10)))
struct RecoveryTests {
    /// A card id unique to this run, ending in `suffix` (a simulator magic suffix).
    static func card(_ suffix: String = "") -> String {
        "pm_\(UUID().uuidString.prefix(8).lowercased())\(suffix)"
    }

    /// Calls the simulator recorded for one handshake (the Apple nonce or Google ids).
    static func calls(_ rig: RecoveryRig, handshake: String?) -> Int {
        rig.stack.simulator.calls.filter { $0.handshake == handshake }.reduce(0) { $0 + $1.count }
    }

    // MARK: - 1. Answer lost after the issuer applied the call

    @Test("Imprint 504 after applying: indeterminate (restart_wallet_flow), then provisioned by reconciliation; one call")
    func timeoutAppliedReconcilesToProvisioned() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration())
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card("-timeout-applied"))
        let id = request.requestID
        try await rig.send(request)

        let snapshot = try await rig.wait(for: "the reconciled result of \(id)") { $0.final(id) != nil && $0.stages(id).contains(.reconciled) }
        let results = snapshot.all(id)
        try #require(results.count == 2, "exactly the indeterminate answer and the reconciled one: \(results.map(\.status))")
        let first = results[0]
        #expect(first.status == .indeterminate)
        #expect(!first.isFinal)
        #expect(first.code == .issuerTimeout)
        #expect(first.nextAction == .restartWalletFlow)
        #expect(first.payload == nil)
        let final = results[1]
        #expect(final.status == .provisioned)
        #expect(final.isFinal)
        #expect(final.nextAction == .checkWallet)
        #expect(final.payload == nil, "reconciliation learns that a token exists, never the payload")
        #expect(final.program == "demo-imprint" && final.issuer == .imprint && final.wallet == .applePay)

        let stages = snapshot.stages(id)
        #expect(stages.contains(.issuerResponded) || stages.contains(.issuerTimedOut))
        #expect(stages.filter { $0 == .reconcileScheduled }.count == 1, "one tier was enough: \(stages)")
        #expect(stages.filter { $0 == .reconciled }.count == 1)
        #expect(!stages.contains(.deadLettered))
        let reconciled = try #require(snapshot.audit.first { $0.requestID == id && $0.stage == .reconciled })
        #expect(reconciled.status == .provisioned)
        #expect(Self.calls(rig, handshake: request.handshake) == 1, "no blind retry of an indeterminate call")
        #expect(snapshot.deadLetters.isEmpty)
    }

    // MARK: - 2. Answer lost, nothing applied

    @Test("Imprint 504 without applying: reconciliation answers not_provisioned")
    func timeoutUnappliedReconcilesToNotProvisioned() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration())
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card("-timeout-unapplied"))
        let id = request.requestID
        try await rig.send(request)

        let snapshot = try await rig.wait(for: "the reconciled result of \(id)") { $0.final(id) != nil && $0.stages(id).contains(.reconciled) }
        let results = snapshot.all(id)
        try #require(results.count == 2, "\(results.map(\.status))")
        #expect(results[0].status == .indeterminate && !results[0].isFinal)
        let final = results[1]
        #expect(final.status == .notProvisioned)
        #expect(final.isFinal)
        #expect(final.code == .issuerTimeout)
        #expect(final.nextAction == .restartWalletFlow, "Apple: the handshake is spent, a new wallet flow is needed")
        #expect(snapshot.stages(id).contains(.reconcileScheduled))
        #expect(Self.calls(rig, handshake: request.handshake) == 1)
    }

    // MARK: - 3. An issuer that never answers, under a short deadline

    @Test("a hanging issuer call ends inside the request's budget, then reconciles to not_provisioned")
    func hangingCallTimesOutInsideTheBudget() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let configuration = try rig.configuration()
        let metrics = MetricsRegistry()
        try rig.startWorker(configuration, metrics: metrics)
        try await rig.warmUp()
        let margin = configuration.deadlines.replyMarginMs
        // Well inside the Apple window (20 s) and the program's own call timeout (10 s).
        let deadline = Timestamps.nowMs() + 5_000
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card("-hang"), deadlineMs: deadline)
        let id = request.requestID
        try await rig.send(request)

        let snapshot = try await rig.wait(for: "the reconciled result of \(id)") { $0.final(id) != nil && $0.stages(id).contains(.reconciled) }
        let results = snapshot.all(id)
        try #require(results.count == 2, "\(results.map(\.status))")
        let first = results[0]
        #expect(first.status == .indeterminate, "the call was sent, so its fate is unknown: \(first.message)")
        #expect(!first.isFinal)
        #expect(first.code == .issuerTimeout)
        #expect(first.timing.deadlineMs == deadline, "the request's own deadline is the effective one")
        // When the interim result was in Kafka (the collector read it; `published_at` is stamped
        // before the producer is even called), and whether the worker's delivery report came late.
        let inKafka = try #require(snapshot.results[id]?.first?.consumedAtMs)
        #expect(inKafka <= deadline - margin, "in Kafka \(deadline - inKafka) ms before the deadline; the margin is \(margin) ms")
        #expect(metrics.total("provisioner_deadline_misses_total") == 0, "the worker counted a result acknowledged after publish-by")
        #expect(snapshot.stages(id).contains(.issuerTimedOut))
        let final = results[1]
        #expect(final.status == .notProvisioned)
        #expect(final.isFinal)
        #expect(Self.calls(rig, handshake: request.handshake) == 1)
        #expect((first.timing.issuerMs ?? .max) < configuration.program("demo-imprint")!.timeoutMs, "the request's budget ended the call")
    }

    // MARK: - 4. An issuer without a state API

    @Test("DCS timeout: no state API, so the final result says check_wallet")
    func dcsTimeoutEndsWithCheckWallet() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration())
        // DCS Apple binding has no card id on the wire: the magic suffix travels in externalUserId.
        let card = Self.card("-timeout-applied")
        let request = try rig.factory.provision(program: "demo-dcs", wallet: .applePay, cardID: card, userID: "u_\(card)")
        let id = request.requestID
        try await rig.send(request)

        let snapshot = try await rig.wait(for: "the final result of \(id)") { $0.final(id) != nil && $0.stages(id).contains(.reconciled) }
        let results = snapshot.all(id)
        try #require(results.count == 2, "\(results.map(\.status))")
        #expect(results[0].status == .indeterminate && !results[0].isFinal)
        #expect(results[0].issuer == .dcs)
        let final = results[1]
        #expect(final.isFinal)
        #expect(final.status == .indeterminate)
        #expect(final.nextAction == .checkWallet)
        #expect(final.issuer == .dcs)
        #expect(!snapshot.stages(id).contains(.deadLettered), "no state API is an answer, not an exhausted reconciliation")
        #expect(Self.calls(rig, handshake: request.handshake) == 1)
    }
}
