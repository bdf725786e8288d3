import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

/// A `started` or `completed` marker write that fails. A two-broker cluster where
/// broker 2 leads the markers topic alone and broker 1 everything else, so Produce errors pushed
/// onto broker 2 fail marker writes and nothing else (results, audit, requests keep flowing).
extension RecoveryTests {
    // A per-message permanent error: `topicAuthorizationFailed` would also put librdkafka's topic
    // in an error state that fails the next writes locally, beyond the pushed count.

    /// A rig whose markers partitions are led by their own broker; returns it and that broker.
    static func markerFaultRig() throws -> (RecoveryRig, markersBroker: Int32) {
        try isolatedTopicRig { $0.markers }
    }

    /// A one-partition rig where broker 2 leads only the topic `isolated` names.
    static func isolatedTopicRig(_ isolated: (TopicNames) -> String) throws -> (RecoveryRig, Int32) {
        let rig = try RecoveryRig(brokers: 2, partitions: 1)
        let ids = rig.stack.cluster.brokerIDs
        guard ids.count == 2 else { rig.stop(); throw TestSupportError("expected 2 brokers, got \(ids)") }
        let faulted = isolated(rig.topics)
        for topic in rig.topics.all {
            let leader = topic == faulted ? ids[1] : ids[0]
            if let failure = rig.stack.cluster.setPartitionLeader(topic: topic, partition: 0, brokerID: leader) {
                rig.stop()
                throw failure
            }
        }
        return (rig, ids[1])
    }

    static func markersEnd(_ rig: RecoveryRig) throws -> Int64 {
        try rig.endOffsets(rig.topics.markers)[0] ?? -1
    }

    @Test("a started marker that cannot be written: the issuer is not called, the request is answered failed (upstream_error) once, decided without a call, its offset completes")
    func startedMarkerWriteFails() async throws {
        let (rig, markersBroker) = try Self.markerFaultRig()
        defer { rig.stop() }
        let metrics = MetricsRegistry()
        try rig.startWorker(try rig.configuration { $0.publishAttempts = 3 }, metrics: metrics)
        try await rig.warmUp()
        // The warm-up's completed marker is written after its result: count markers once it is in.
        try #require(try await rig.waitForRequestsCommitted() == [])
        let before = try Self.markersEnd(rig)

        // The started marker is written with 3 attempts: fail exactly those, so the decision of
        // the answer without a call (before it) and the published marker (after it) are written.
        try #require(rig.stack.cluster.pushRequestErrors(brokerID: markersBroker, apiKey: .produce,
                                                         errors: Array(repeating: .messageSizeTooLarge, count: 3)) == nil)
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card())
        let id = request.requestID
        try await rig.send(request)
        let snapshot = try await rig.wait(for: "the answer to \(id)") { $0.final(id) != nil && $0.stages(id).contains(.resultPublished) }

        let results = snapshot.all(id)
        try #require(results.count == 1, "answered once: \(results.map(\.status))")
        let answer = results[0]
        #expect(answer.status == .failed)
        #expect(answer.code == .upstreamError)
        #expect(answer.isFinal)
        #expect(answer.message.contains("the issuer was not called"), "\(answer.message)")
        #expect(Self.calls(rig, handshake: request.handshake) == 0, "the issuer must not be called without a started marker")
        #expect(!snapshot.stages(id).contains(.issuerCallStarted), "\(snapshot.stages(id))")
        #expect(rig.logs.renderedLines.contains { $0.contains("could not write the call marker") }, "\(rig.recentLogs())")
        #expect(try await rig.waitForRequestsCommitted() == [], "the answered request's offset completes")
        let after = try Self.markersEnd(rig)
        #expect(after == before + 2, "the decision and the published marker, no started marker: \(before) → \(after)\n\(rig.recentLogs(15))")
        #expect(snapshot.deadLetters(id, topic: rig.topics.deadLetters).isEmpty)
    }

    @Test("the decision and the completed marker fail to be written: each is retried until written, the result is published once after its decision, then the offset completes")
    func completedMarkerWriteFails() async throws {
        let (rig, markersBroker) = try Self.markerFaultRig()
        defer { rig.stop() }
        let metrics = MetricsRegistry()
        try rig.startWorker(try rig.configuration { $0.publishAttempts = 2 }, metrics: metrics)
        try await rig.warmUp()
        // The warm-up's completed marker is written after its result: count markers once it is in.
        try #require(try await rig.waitForRequestsCommitted() == [])
        let before = try Self.markersEnd(rig)

        // A slow issuer keeps the call open; once its started marker was acknowledged (the
        // issuer_call_started event follows that), fail the next four marker writes: the decision
        // (written before the result) and the completed marker each fail and are retried until
        // written, beyond the publisher's two attempts: a final is never published undecided.
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card("-slow-2500"))
        let id = request.requestID
        try await rig.send(request)
        try await rig.wait(for: "the call of \(id) to start") { $0.stages(id).contains(.issuerCallStarted) }
        try #require(rig.stack.cluster.pushRequestErrors(brokerID: markersBroker, apiKey: .produce,
                                                         errors: Array(repeating: .messageSizeTooLarge, count: 4)) == nil)

        let snapshot = try await rig.wait(for: "the answer to \(id)") { $0.final(id) != nil && $0.stages(id).contains(.resultPublished) }
        #expect(try await rig.waitForRequestsCommitted(timeoutMs: 20_000) == [],
                "the completed marker is written on a later attempt and the offset completes")
        let results = rig.collector.snapshot.all(id)
        try #require(results.count == 1, "published once: \(results.map(\.status))")
        #expect(results[0].status == .provisioned, "\(results[0].status): \(results[0].message)")
        #expect(Self.calls(rig, handshake: request.handshake) == 1)
        #expect(!rig.logs.renderedLines.contains { $0.contains("decision marker not written") }, "\(rig.recentLogs())")
        #expect(rig.logs.renderedLines.contains { $0.contains("publish retry") }, "\(rig.recentLogs())")
        let after = try Self.markersEnd(rig)
        #expect(after == before + 3, "the started marker, the decision and the completed marker: \(before) → \(after)")
        #expect(snapshot.deadLetters(id, topic: rig.topics.deadLetters).isEmpty)
    }
}
