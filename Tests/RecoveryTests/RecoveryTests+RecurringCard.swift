import Contract
import Foundation
import Harness
import Observability
import Testing
import TestSupport

extension RecoveryTests {
    /// A card that recurs on one device, with calls whose answers are lost (the issuer answers
    /// after the program's 10 s timeout): the first request's call made the wallet token
    /// (reconciled `provisioned` / `check_wallet`); a later request for the same card on the same
    /// device was refused by the issuer as a repeat, and reconciliation, which sees only the
    /// earlier call's token, must answer `already_provisioned`, never `not_provisioned` /
    /// `restart_wallet_flow`. Every final is compared with the simulator's call log and wallet state.
    @Test("a recurring card on one device: a lost answer to a repeat call is reconciled already_provisioned; every final true to the issuer")
    func recurringCardOnOneDevice() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration())
        let card = Self.card("-slow-12000")
        // Two devices: the first and third request share one.
        let phone = try RequestFactory(devices: 1), tablet = try RequestFactory(devices: 1)
        var requests: [(request: GeneratedRequest, producedAtMs: Int64)] = []
        var snapshot = rig.collector.snapshot
        // The third request comes once the first two are answered (requests of one card are called
        // one at a time: sent together it would wait out its window behind two 10 s calls).
        for batch in [[phone, tablet], [phone]] {
            for factory in batch {
                let request = try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card)
                requests.append((request, Timestamps.nowMs()))
                try await rig.send(request)
            }
            let ids = requests.map(\.request.requestID)
            // A reconciled event is sent after its final is acknowledged: wait for both.
            snapshot = try await rig.wait(for: "the reconciled finals of \(ids)", timeoutMs: 90_000) { snapshot in
                ids.allSatisfy { snapshot.final($0) != nil && snapshot.stages($0).contains(.reconciled) }
            }
        }
        let ids = requests.map(\.request.requestID)
        let devices = requests.map { FinalTruthCheck.deviceRef(of: $0.request) }
        try #require(devices[0] == devices[2] && devices[0] != devices[1], "the first and third request share a device")
        for id in ids { #expect(snapshot.stages(id).contains(.reconciled), "\(id) was reconciled: \(snapshot.stages(id))") }
        #expect(snapshot.final(ids[0])?.status == .provisioned && snapshot.final(ids[0])?.nextAction == .checkWallet)
        #expect(snapshot.final(ids[1])?.status == .provisioned, "another device: its own token")
        #expect(snapshot.final(ids[2])?.status == .alreadyProvisioned, "the card was already in that wallet on that device")
        let untrue = FinalTruthCheck.untrue(requests, final: { snapshot.final($0) }, simulator: rig.stack.simulator)
        #expect(untrue.isEmpty, "finals that contradict the issuer: \(untrue)")
        for entry in requests { #expect(Self.calls(rig, handshake: entry.request.handshake) == 1) }
    }
}
