import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing

extension RecoveryTests {
    // MARK: - 9. Internal records cannot trap a worker

    /// Reconciliation jobs whose `due_at` (Int64.min) or `attempt` (Int64.max) would overflow in
    /// the worker's timer and runner unchecked: each is dead-lettered `invalid_reconcile_job` with a reason
    /// naming the field, and the worker goes on reconciling a genuine request afterwards.
    @Test("reconciliation jobs out of range are dead-lettered with a reason; the worker keeps reconciling")
    func outOfRangeReconcileJobsAreDeadLettered() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let topics = rig.topics
        try rig.startWorker(try rig.configuration())
        let now = Timestamps.nowMs()
        func job(_ id: String, attempt: Int, dueAtMs: Int64) -> ReconcileJob {
            ReconcileJob(requestID: id, program: "demo-imprint", issuer: .imprint, wallet: .googlePay, kind: .provision,
                         cardID: Sensitive(Self.card()), deviceRef: nil, transactionReference: nil, windowStartMs: now,
                         deadlineMs: now + 60_000, attempt: attempt, dueAtMs: dueAtMs, firstIndeterminateAtMs: now, traceparent: nil)
        }
        let bad = [("bad-due-\(UUID().uuidString.prefix(8))", job("x", attempt: 1, dueAtMs: .min), "due_at"),
                   ("bad-attempt-\(UUID().uuidString.prefix(8))", job("x", attempt: .max, dueAtMs: now), "attempt")]
        var placed: [(field: String, offset: Int64, partition: Int32)] = []
        for (id, template, field) in bad {
            var record = template
            record.requestID = id
            let report = try await rig.send(record.encodedJSON(), key: Array(id.utf8), topic: topics.reconcile)
            placed.append((field, report.offset, report.partition))
        }
        // A genuine lost answer after the bad jobs: still reconciled by the same worker.
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card("-timeout-applied"))
        let id = request.requestID
        try await rig.send(request)

        let snapshot = try await rig.wait(for: "both bad jobs dead-lettered and \(id) reconciled") { snapshot in
            snapshot.deadLetters.filter { $0.provenance?.code == .invalidReconcileJob }.count == bad.count
                && snapshot.final(id) != nil && snapshot.stages(id).contains(.reconciled)
        }
        for item in placed {
            let entry = try #require(snapshot.deadLetters.first {
                $0.provenance?.originalTopic == topics.reconcile && $0.provenance?.originalOffset == item.offset
                    && $0.provenance?.originalPartition == item.partition
            })
            #expect(entry.topic == topics.deadLetters)
            #expect(entry.provenance?.reason.contains(item.field) == true, "\(entry.provenance?.reason ?? "")")
            #expect(entry.provenance?.isReplayable == false)
        }
        #expect(snapshot.final(id)?.status == .provisioned)
        for (badID, _, _) in bad { #expect(snapshot.all(badID).isEmpty, "no result for a refused job") }
    }

    /// A request whose `x-replay-of` header is not `topic:partition:offset` within 256 bytes (an
    /// over-size one would make its `started` marker unreadable) is dead-lettered
    /// `invalid_replay_of`, not replayable, before anything else: no result, no issuer call.
    @Test("a request with an invalid x-replay-of is dead-lettered invalid_replay_of: no result, no call")
    func invalidReplayHeaderIsDeadLettered() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let topics = rig.topics
        try rig.startWorker(try rig.configuration())
        let values = ["\(topics.deadLetters):0:" + String(repeating: "7", count: 300), "not a dead letter id", "\(topics.deadLetters):-1:5"]
        var requests: [GeneratedRequest] = []
        for value in values {
            let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card())
            try await rig.send(request, headers: [KafkaHeader(key: DeadLetterHeader.replayOf, string: value)])
            requests.append(request)
        }
        // A valid replay header still goes through (the original never existed: it is just a request).
        let valid = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card())
        try await rig.send(valid, headers: [KafkaHeader(key: DeadLetterHeader.replayOf, string: "\(topics.deadLetters):0:12")])
        let ids = requests.map(\.requestID)

        let snapshot = try await rig.wait(for: "every invalid replay dead-lettered and the valid one answered", timeoutMs: 30_000) { snapshot in
            ids.allSatisfy { id in snapshot.deadLetters(id, topic: topics.deadLetters).contains { $0.provenance?.code == .invalidReplayOf } }
                && snapshot.final(valid.requestID) != nil
        }
        try await Task.sleep(for: .milliseconds(500))
        let settled = rig.collector.snapshot
        let called = Set(rig.stack.simulator.calls.map(\.handshake))
        for request in requests {
            let id = request.requestID
            #expect(settled.all(id).isEmpty, "\(id): no result for a message with an invalid x-replay-of")
            let entry = try #require(snapshot.deadLetters(id, topic: topics.deadLetters).first)
            #expect(entry.provenance?.isReplayable == false)
            #expect(entry.replayOf == nil, "the invalid header is not carried onto the dead letter")
            #expect(!called.contains(try #require(request.handshake)), "\(id): the issuer was called")
            #expect(settled.stages(id).contains(.deadLettered))
        }
        #expect(settled.final(valid.requestID)?.status == .provisioned)
        #expect(settled.deadLetters.filter { $0.topic == topics.parked }.isEmpty)
    }

    /// A markers record whose value cannot be read but whose key names a request (the shape an
    /// over-size `x-replay-of` would leave): the new owner counts it, warns, and treats the
    /// request as possibly called: reconciled, never called again.
    @Test("an undecodable marker keyed by a request makes its redelivery reconcile instead of calling")
    func undecodableMarkerMeansReconcile() async throws {
        let rig = try RecoveryRig(partitions: 1)
        defer { rig.stop() }
        let topics = rig.topics
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: Self.card())
        let id = request.requestID
        let placed = try await rig.send(request)
        for garbage in [Array("{\"request_id\":\"\(id)\",\"state\":\"started\",\"request_offset\":-1".utf8), [0xFF, 0x00, 0x7B]] {
            _ = try await rig.producer.send(KafkaOutgoingMessage(topic: topics.markers, key: Array(id.utf8), value: garbage,
                                                                 headers: [], partition: placed.partition))
        }
        // One with no usable key: counted, but it names no request.
        _ = try await rig.producer.send(KafkaOutgoingMessage(topic: topics.markers, key: nil, value: Array("garbage".utf8), headers: [],
                                                             partition: placed.partition))

        let clock = SteppedClock()
        let worker = try rig.startWorker(try rig.configuration(), clock: clock.now)
        // A possibly started call is given up at the request's deadline (its 20 s Apple Pay window):
        // once the interim answer is out, the worker's clock is stepped past it instead of waiting.
        let interim = try await rig.wait(for: "the interim result of \(id)") { !$0.all(id).isEmpty }
        if let deadlineMs = interim.all(id).first?.timing.deadlineMs { clock.step(max(0, deadlineMs + 500 - clock.now())) }
        let snapshot = try await rig.wait(for: "the reconciled result of \(id)") { $0.final(id) != nil && $0.stages(id).contains(.reconciled) }
        let results = snapshot.all(id)
        #expect(results.first?.status == .indeterminate && results.first?.isFinal == false, "\(results.map(\.status))")
        #expect(results.last?.status == .notProvisioned, "reconciliation found no token: \(results.map(\.status))")
        #expect(!rig.stack.simulator.calls.contains { $0.handshake == request.handshake }, "the issuer was called for a possibly started call")
        #expect(worker.metrics.total("provisioner_undecodable_markers_total") >= 3)
        #expect(rig.logs.renderedLines.contains { $0.contains("undecodable call marker") })
    }
}
