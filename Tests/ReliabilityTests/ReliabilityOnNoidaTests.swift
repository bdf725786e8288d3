import Contract
import Foundation
import HTTP
import Harness
import Kafka
import Testing
import TestSupport

/// The pipeline on a separate broker process, noida-db (PyPI; a single-node Kafka-compatible broker
/// that is not librdkafka's mock cluster): the demo's mix through a worker process (reconciliation
/// included), scale 1 → 3 → 2 and kill -9 with calls in flight, each asserting what the mock-cluster
/// scenarios assert; and a consumer error retrying cannot heal (noida-db refusing a short
/// `session.timeout.ms`, as Apache Kafka does) failing the worker clearly. The `noida` phase of `scripts/test` runs this suite; the other phases skip it.
@Suite("On noida-db, a separate broker process: demo mix, scale, kill -9, a refused session timeout", .serialized, .timeLimit(.minutes(10)))
struct ReliabilityOnNoidaTests {
    /// Every case of the demo's plan (each wallet on each issuer, every failure card, expired,
    /// invalid, duplicate, reused nonce, undecodable) gets its expected final or dead letter from
    /// one worker process on noida-db, and lost answers (504, timeout after sending) are reconciled.
    @Test("acceptance smoke: the demo's mix through a worker process on noida-db, reconciliation included")
    func demoMix() async throws {
        try await Self.demoMix(on: .noida)
    }

    /// The demo's mix through one worker process on `broker`, every expectation met, lost answers reconciled.
    static func demoMix(on broker: RigBroker) async throws {
        let rig = try await ProcessGroupRig(name: "noida-smoke", partitions: 6, broker: broker)
        defer { rig.stop() }
        let worker = try rig.worker("noida-smoke-w1")
        defer { worker.process.kill() }
        try #require(await ChildWorker.waitForGroup([worker], partitions: rig.partitions), "the worker did not take the partitions")
        try rig.warmUp()
        let cases = try DemoPlan.make(total: 60, factory: rig.factory)
        for demoCase in cases {
            try rig.producer.send(KafkaOutgoingMessage(topic: rig.topics.requests, key: demoCase.request.key, value: demoCase.request.value)) { _ in }
        }
        let met = rig.collector.wait(timeoutMs: 90_000) { snapshot in cases.allSatisfy { $0.unmet(in: snapshot) == nil } }
        let snapshot = rig.collector.snapshot
        let unmet = cases.compactMap { demoCase in demoCase.unmet(in: snapshot).map { "\(demoCase.label): expected \($0.expected), got \($0.got)" } }
        #expect(met && unmet.isEmpty, "\(unmet.count) of \(cases.count) cases unmet: \(unmet.prefix(10))")
        let reconciled = cases.filter { (snapshot.final($0.request.requestID)?.attempt ?? 0) > 1 }.count
        #expect(reconciled > 0, "no lost answer was reconciled (the plan has 504-after-applying and timeout cards)")
        #expect(worker.isRunning, "the worker stopped")
        ReliabilityReport.emit("demo_mix_\(broker.rawValue)", [
            "broker": .string(broker.rawValue), "cases": ReliabilityReport.int(cases.count),
            "expectations_met": ReliabilityReport.int(cases.count - unmet.count), "reconciled": ReliabilityReport.int(reconciled),
            "dead_letters": ReliabilityReport.int(snapshot.deadLetters.count),
        ])
    }

    /// `ReliabilityTests.scaleWhileCalling` on noida-db.
    @Test("scale 1 → 3 → 2 with slow calls in flight on noida-db: every request final, no handshake twice, no two different finals")
    func scaleWhileCalling() async throws {
        try await ReliabilityTests.scaleWhileCalling(on: .noida)
    }

    /// `ReliabilityTests.killedWorkerMidCall` on noida-db, which never re-assigns the killed
    /// worker's partitions (docs/RELIABILITY.md, "Known limits"): their requests after the kill may stay unanswered.
    @Test("kill -9 of one of three workers mid-call on noida-db: every request off the killed worker's partitions answered, no handshake twice, no two different finals")
    func killedWorkerMidCall() async throws {
        try await ReliabilityTests.killedWorkerMidCall(on: .noida)
    }

    /// noida-db, like Apache Kafka, refuses a `session.timeout.ms` below its
    /// `group.min.session.timeout.ms` (6,000) on every JoinGroup, which retrying never heals: the
    /// worker says so once as an error with the fix, `/readyz` fails with that reason, and the
    /// process exits non-zero after `ConsumerErrorWatch.exitAfterMs` instead of warning forever.
    @Test("session.timeout.ms 4500 refused by the broker: one error line with the fix, /readyz fails with it, exit 1 after the bound")
    func refusedSessionTimeout() async throws {
        let rig = try await ProcessGroupRig(name: "noida-session", partitions: 2, broker: .noida)
        defer { rig.stop() }
        let worker = try rig.worker("noida-session-w1", environment: ["PROVISIONER_KAFKA_CONSUMER__SESSION_TIMEOUT_MS": "4500"])
        defer { worker.process.kill() }
        let expected = "session.timeout.ms 4500 is below the broker's group.min.session.timeout.ms"
        let port = try #require(await Self.observabilityPort(worker), "the worker did not say where it serves /readyz")
        // The reason appears on /readyz while the worker still runs.
        let http = HTTPClient()
        defer { http.shutdown() }
        var readiness: (status: Int, body: String) = (0, "")
        var failedReadiness = false
        for _ in 0..<60 where !failedReadiness {
            if case .success(let response) = await http.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)/readyz", timeoutMs: 5_000)) {
                readiness = (response.status, String(decoding: response.body, as: UTF8.self))
                failedReadiness = response.status == 503 && readiness.body.contains(expected)
            }
            if !failedReadiness { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(failedReadiness, "/readyz did not fail with the reason: \(readiness.status) \(readiness.body)")
        let termination = try await worker.process.waitForExit(timeout: .seconds(90))
        #expect(termination == .exited(1), "the worker did not exit 1: \(termination)")
        let entries = worker.logEntries
        let reasonLines = entries.filter { $0["level"]?.stringValue == "error" && ($0["msg"]?.stringValue?.contains(expected) ?? false) }
        #expect(reasonLines.count == 1, "not one error line with the fix: \(reasonLines.count)")
        #expect(reasonLines.first?["msg"]?.stringValue?.contains("raise kafka_consumer.session.timeout.ms") ?? false)
        let warnings = entries.filter { $0["msg"]?.stringValue == "consumer error" }
        #expect(warnings.isEmpty, "the refused join was still logged as a warning \(warnings.count) times")
        let exitLine = entries.last { $0["msg"]?.stringValue?.hasPrefix("worker stopped after a fatal error") ?? false }
        #expect(exitLine?["error"]?.stringValue?.contains(expected) ?? false, "the exit line does not give the reason")
    }

    /// The port of the worker's `/readyz` from its "serving /healthz, /readyz and /metrics" log line.
    private static func observabilityPort(_ worker: ChildWorker) async -> UInt16? {
        var port: UInt16?
        _ = await Waiting.until(timeoutMs: 30_000) {
            port = worker.logEntries.first { $0["msg"]?.stringValue == "serving /healthz, /readyz and /metrics" }?["port"]?.int64Value
                .flatMap { UInt16(exactly: $0) }
            return port != nil
        }
        return port
    }
}
