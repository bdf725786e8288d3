import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

/// Rotating a program's request-signing key without an outage: `demo-imprint` lists named keys
/// (`request_signing.keys`), the worker accepts each until its `not_after`.
extension ReliabilityTests {
    /// The overlap of a rotation under load: the previous key (retiring a little after the load)
    /// and the current key both sign a stream of requests, alternately, and a third key retired
    /// before the worker started signs a few; `provisioner produce --sign-env --key-id` signs with
    /// the current key. Must hold: every request signed by either key inside the overlap is
    /// provisioned, once (0 refused, 0 lost); the retired key's are refused (dead letter
    /// `unauthenticated`, no answer, no call); once the previous key's `not_after` has passed, its
    /// requests are refused too while the current key's are still answered.
    @Test("key rotation under load: either key inside the overlap is answered (0 refused, 0 lost); a retired key is refused")
    func signingKeyRotation() async throws {
        let previous = "rotation-previous-" + Crypto.hex(Crypto.randomBytes(16))
        let current = "rotation-current-" + Crypto.hex(Crypto.randomBytes(16))
        let retired = "rotation-retired-" + Crypto.hex(Crypto.randomBytes(16))
        let previousRetiresAt = Timestamps.nowMs() + 25_000
        let rig = try await SigningRig(name: "reliability-key-rotation",
                                       environment: ["ROTATION_PREVIOUS": previous, "ROTATION_CURRENT": current, "ROTATION_RETIRED": retired]) {
            $0.programs["demo-imprint"]?.requestSigningSecret = nil
            $0.programs["demo-imprint"]?.requestSigningKeys = [
                RequestSigningKey(id: "2026-11", secret: .environment("ROTATION_PREVIOUS"), notAfterMs: previousRetiresAt, keyPath: "keys[0]"),
                RequestSigningKey(id: "2026-12", secret: .environment("ROTATION_CURRENT"), keyPath: "keys[1]"),
                RequestSigningKey(id: "2026-10", secret: .environment("ROTATION_RETIRED"), notAfterMs: Timestamps.nowMs() - 60_000,
                                  keyPath: "keys[2]"),
            ]
        }
        defer { rig.stop() }
        let factory = rig.factory
        func send(_ request: GeneratedRequest, secret: String, keyID: String) throws {
            let headers = RequestSigner(secret: Sensitive(secret), keyID: keyID)
                .signed(key: request.key, value: request.value, headers: [],
                        partition: RequestPartitioner.partition(key: request.key, count: rig.partitions), nowMs: Timestamps.nowMs())
            try rig.send(request, headers: headers)
        }
        func request(_ label: String, _ index: Int, wallet: Wallet = .googlePay) throws -> GeneratedRequest {
            try factory.provision(program: "demo-imprint", wallet: wallet, cardID: "pm_rot_\(label)_\(index)", requestID: factory.requestID("rot-\(label)"))
        }

        // The overlap, under load: ~6 requests a second for 8 s, the two keys alternating, the
        // retired key now and then; all sent well before the previous key's not_after.
        var overlap: [GeneratedRequest] = []
        var refused: [GeneratedRequest] = []
        let loadEnds = min(Timestamps.nowMs() + 8_000, previousRetiresAt - 8_000)
        var index = 0
        while Timestamps.nowMs() < loadEnds {
            let next = try request("overlap", index, wallet: index % 5 == 0 ? .applePay : .googlePay)
            try send(next, secret: index % 2 == 0 ? previous : current, keyID: index % 2 == 0 ? "2026-11" : "2026-12")
            overlap.append(next)
            if index % 10 == 3 {
                let stale = try request("retired", index)
                try send(stale, secret: retired, keyID: "2026-10")
                refused.append(stale)
            }
            index += 1
            try await Task.sleep(for: .milliseconds(160))
        }
        try #require(overlap.count >= 20, "only \(overlap.count) requests were sent in the overlap")
        // `provisioner produce` signs with the current key and names it.
        var produced: [GeneratedRequest] = []
        for index in 0..<3 { produced.append(try request("cli", index)) }
        let process = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                       arguments: ["produce", "--bootstrap", rig.stack.bootstrapServers, "--sign-env", "ROTATION_KEY", "--key-id", "2026-12"],
                                       environment: ["ROTATION_KEY": current], standardInput: produced.reduce(into: []) { $0 += $1.value + [0x0A] })
        #expect(try await process.waitForExit(timeout: .seconds(60)) == .exited(0))

        // After the previous key's not_after: its requests are refused, the current key's answered.
        try await Task.sleep(for: .milliseconds(max(0, previousRetiresAt - Timestamps.nowMs() + 500)))
        var afterwards: [GeneratedRequest] = []
        for index in 0..<3 {
            let late = try request("late-previous", index)
            try send(late, secret: previous, keyID: "2026-11")
            refused.append(late)
            let fresh = try request("late-current", index)
            try send(fresh, secret: current, keyID: "2026-12")
            afterwards.append(fresh)
        }

        let accepted = overlap + produced + afterwards
        let complete = rig.collector.wait(timeoutMs: 60_000) { snapshot in
            accepted.allSatisfy { snapshot.final($0.requestID) != nil }
                && refused.allSatisfy { !rig.unauthenticatedDeadLetters($0.requestID, in: snapshot).isEmpty }
        }
        let snapshot = rig.collector.snapshot
        let unanswered = accepted.filter { snapshot.final($0.requestID) == nil }.count
        let unlettered = refused.filter { rig.unauthenticatedDeadLetters($0.requestID, in: snapshot).isEmpty }.count
        #expect(complete, "unanswered: \(unanswered), refused without a dead letter: \(unlettered)")
        let notProvisioned = accepted.filter { snapshot.final($0.requestID)?.status != .provisioned }
        let shown = notProvisioned.prefix(5).map { "\($0.requestID): \(snapshot.final($0.requestID)?.status.rawValue ?? "no final")" }
        #expect(notProvisioned.isEmpty, "\(notProvisioned.count) of \(accepted.count) signed by a key inside its window were not provisioned: \(shown)")
        let refusedInOverlap = accepted.filter { !rig.unauthenticatedDeadLetters($0.requestID, in: snapshot).isEmpty }
        #expect(refusedInOverlap.isEmpty, "\(refusedInOverlap.count) refused inside the overlap")
        let calls = rig.stack.simulator.calls
        for request in accepted {
            let card = JSONValue.parsed(request.value)["card"]?["id"]?.stringValue
            #expect(calls.filter { $0.cardID == card }.map(\.count) == [1], "\(request.requestID): issuer calls \(calls.filter { $0.cardID == card })")
        }
        for request in refused {
            let card = JSONValue.parsed(request.value)["card"]?["id"]?.stringValue
            #expect((snapshot.results[request.requestID] ?? []).isEmpty, "\(request.requestID) was answered")
            #expect(!calls.contains { $0.cardID == card }, "\(request.requestID): the issuer was called")
            let reasons = rig.unauthenticatedDeadLetters(request.requestID, in: snapshot).compactMap { $0.provenance?.reason }
            #expect(reasons.count == 1 && reasons.allSatisfy { $0.contains("retired at") }, "\(reasons)")
        }
        #expect(rig.registry.total("provisioner_unauthenticated_total") == Double(refused.count))
    }
}
