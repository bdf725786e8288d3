import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

/// An audit publish that fails (its metric is a documented alert) and the
/// shutdown drain bound.
extension RecoveryTests {
    @Test("audit writes that fail: provisioner_audit_publish_failures_total counts the dropped events, the result is still published and the offset completes")
    func auditPublishFailureIsCounted() async throws {
        let (rig, auditBroker) = try Self.isolatedTopicRig { $0.audit }
        defer { rig.stop() }
        let metrics = MetricsRegistry()
        try rig.startWorker(try rig.configuration { $0.publishAttempts = 2 }, metrics: metrics)
        try await rig.warmUp()
        try #require(try await rig.waitForRequestsCommitted() == [])
        let failuresBefore = metrics.value("provisioner_audit_publish_failures_total") ?? 0

        // Every audit write of the next request fails (its events take 2 attempts each).
        try #require(rig.stack.cluster.pushRequestErrors(brokerID: auditBroker, apiKey: .produce,
                                                         errors: Array(repeating: .messageSizeTooLarge, count: 40)) == nil)
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card())
        let id = request.requestID
        try await rig.send(request)
        let snapshot = try await rig.wait(for: "the result of \(id)") { $0.final(id) != nil }
        let results = snapshot.all(id)
        try #require(results.count == 1, "\(results.map(\.status))")
        #expect(results[0].status == .provisioned, "\(results[0].status): \(results[0].message)")
        #expect(try await rig.waitForRequestsCommitted(timeoutMs: 20_000) == [], "audit events never hold an offset back")

        // The request's audit events (received, call started, responded, result published) are
        // all dropped; the last of them may still be in its retry.
        let deadline = Timestamps.nowMs() + 15_000
        var failures = 0.0
        repeat {
            failures = (metrics.value("provisioner_audit_publish_failures_total") ?? 0) - failuresBefore
            if failures >= 4 { break }
            try await Task.sleep(for: .milliseconds(100))
        } while Timestamps.nowMs() < deadline
        #expect(failures >= 4, "dropped audit events counted: \(failures)")
        #expect(rig.logs.renderedLines.contains { $0.contains("audit events dropped after retries") }, "\(rig.recentLogs())")
    }

    @Test("shutdown with an issuer call hanging: the worker stops within shutdown.drain_timeout_ms plus a margin and logs that the drain bound was reached")
    func shutdownDrainBound() async throws {
        let rig = try RecoveryRig(partitions: 1)
        defer { rig.stop() }
        let drainMs: Int64 = 500
        let worker = try rig.startWorker(try rig.configuration { configuration in
            configuration.shutdownDrainMs = drainMs
            // The call may last up to 45 s (within the 60 s Google window): longer than bound and margin.
            configuration.programs["demo-imprint"]?.timeoutMs = 45_000
        })
        try await rig.warmUp()

        // The issuer answers after 40 s: far beyond the bound, so only the bound can end the drain.
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card("-slow-40000"))
        let id = request.requestID
        try await rig.send(request)
        try await rig.wait(for: "the call of \(id) to start") { $0.stages(id).contains(.issuerCallStarted) }

        let started = Timestamps.nowMs()
        await rig.stopWorker(worker)
        let elapsed = Timestamps.nowMs() - started
        // The margin covers the commit, the producer flush and leaving the group on a loaded machine.
        #expect(elapsed < drainMs + 10_000, "stopping took \(elapsed) ms with a \(drainMs) ms drain bound")
        #expect(rig.logs.renderedLines.contains { $0.contains("shutdown drain bound reached") }, "\(rig.recentLogs())")
        #expect(rig.collector.snapshot.all(id).isEmpty, "the hanging call was not answered before the stop")
    }
}
