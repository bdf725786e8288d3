import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing

extension RecoveryTests {
    /// A previous owner wrote the `started` marker of an Imprint request (a
    /// state query exists) and may still be calling: its call can end, and be applied, as late as
    /// the request's publish-by. The new owner's reconciliation must not look before then, or it
    /// can publish `not_provisioned` while the previous owner still publishes `provisioned`.
    @Test("hand-over reconciliation racing the previous owner's running call: the first look waits for the request's publish-by")
    func handOverFirstLookWaitsForPublishBy() async throws {
        let rig = try RecoveryRig(partitions: 1, tiersMs: [300, 600, 1_200])
        defer { rig.stop() }
        let configuration = try rig.configuration()
        let deadline = Timestamps.nowMs() + 9_000
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card(), deadlineMs: deadline)
        let id = request.requestID
        let placed = try await rig.send(request)
        try await rig.send(Self.marker(id, state: "started", requestOffset: placed.offset, outcome: nil),
                           key: Array(id.utf8), topic: rig.topics.markers)
        try rig.startWorker(configuration)

        let snapshot = try await rig.wait(for: "the reconciled final of \(id)", timeoutMs: 60_000) { snapshot in
            snapshot.final(id) != nil && snapshot.stages(id).contains(.reconciled)
        }
        let results = snapshot.all(id)
        #expect(results.first.map { !$0.isFinal && $0.status == .indeterminate } == true, "\(results.map(\.status))")
        let final = try #require(snapshot.final(id))
        let publishBy = deadline - configuration.deadlines.replyMarginMs
        let published = try #require(final.timing.publishedAtMs)
        #expect(published >= publishBy,
                "reconciled \(publishBy - published) ms before publish-by, while the previous owner could still answer")
        #expect(Self.calls(rig, handshake: request.handshake) == 0, "the new owner called the issuer")
    }
}
