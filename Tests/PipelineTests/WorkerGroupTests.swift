import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Workers share the load, and a worker leaving (gracefully, or
/// on SIGTERM as a separate process) loses nothing and doubles nothing.
@Suite("End to end: workers joining and leaving", .serialized, .timeLimit(.minutes(10)))
struct WorkerGroupTests {
    /// Requests of a steady stream: mostly quick, every third slow enough to be in flight when a
    /// worker stops.
    private static func streamRequest(_ rig: PipelineRig, index: Int, slowMs: Int) throws -> GeneratedRequest {
        let suffix = index % 3 == 0 ? "-slow-\(slowMs)" : ""
        let card = "pm_stream\(index)_\(Crypto.hex(Crypto.randomBytes(4)))\(suffix)"
        return switch index % 4 {
        case 0: try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card)
        case 1: try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card)
        case 2: try rig.factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card, opcRequested: false)
        default: try rig.factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: card)
        }
    }

    /// Every request has exactly one result, and it is final and `provisioned`.
    private static func expectExactlyOneProvisionedResult(_ ids: [String], _ snapshot: ResultCollector.Snapshot,
                                                          sourceLocation: SourceLocation = #_sourceLocation) {
        var wrong: [String] = []
        for id in ids {
            let received = snapshot.results[id] ?? []
            if received.count != 1 || received.first?.result.isFinal != true || received.first?.result.status != .provisioned {
                wrong.append("\(id): " + received.map { "\($0.result.status.rawValue)\($0.result.isFinal ? "" : " (interim)")" }.joined(separator: ", "))
            }
        }
        #expect(wrong.isEmpty, "requests without exactly one provisioned result: \(wrong)", sourceLocation: sourceLocation)
    }

    @Test("two workers share a stream; one stopping gracefully mid-stream loses and doubles nothing")
    func gracefulLeaveMidStream() throws {
        let rig = try PipelineRig(partitions: 4)
        defer { rig.stop() }
        let leaving = try rig.startWorker("worker-leaving")
        let staying = try rig.startWorker("worker-staying")
        try rig.formGroupAndWarmUp()
        let leavingMetrics = try #require(rig.metrics(of: leaving))
        let stayingMetrics = try #require(rig.metrics(of: staying))
        // A result can reach the collector before its worker counts the acknowledgement.
        let warmUpCounted = PipelineRig.wait(timeoutMs: 10_000) {
            leavingMetrics.total("provisioner_requests_total") + stayingMetrics.total("provisioner_requests_total") == Double(rig.stack.partitions)
        }
        try #require(warmUpCounted, "the workers did not count the warm-up results")
        let leavingBefore = leavingMetrics.total("provisioner_requests_total")
        let stayingBefore = stayingMetrics.total("provisioner_requests_total")
        #expect(leaving.assignedPartitionCount > 0 && staying.assignedPartitionCount > 0)

        let total = 120
        var ids: [String] = []
        let stopped = DispatchGroup()
        let stack = rig.stack
        for index in 0..<total {
            let request = try Self.streamRequest(rig, index: index, slowMs: 400)
            try rig.send(request)
            ids.append(request.requestID)
            if index == total / 3 {
                // Stop while the stream goes on: calls are in flight and messages keep arriving.
                stopped.enter()
                DispatchQueue.global().async {
                    stack.stopWorker(leaving)
                    stopped.leave()
                }
            }
            // A steady stream: about 20 requests a second.
            _ = stopped.wait(timeout: .now() + .milliseconds(50))
        }
        #expect(stopped.wait(timeout: .now() + .seconds(60)) == .success, "the leaving worker did not stop within 60 s")
        let finalsOK = rig.waitForFinals(ids)
        #expect(finalsOK, "no final result for \(rig.missingFinals(ids))")
        if !finalsOK { rig.printLogs(because: "some requests got no final") }
        try rig.expectQuiet()
        #expect(PipelineRig.wait(timeoutMs: 30_000) { staying.assignedPartitionCount == rig.stack.partitions },
                "the staying worker did not take over every partition")

        Self.expectExactlyOneProvisionedResult(ids, rig.collector.snapshot)
        let byLeaving = leavingMetrics.total("provisioner_requests_total") - leavingBefore
        let byStaying = stayingMetrics.total("provisioner_requests_total") - stayingBefore
        #expect(byLeaving > 0, "the leaving worker answered none of the stream")
        #expect(byStaying > 0, "the staying worker answered none of the stream")
        #expect(Int(byLeaving + byStaying) == total, "workers counted \(byLeaving) + \(byStaying) results for \(total) requests")
        // The leaving worker drained: nothing it had was left to be redone.
        let drainWarnings = rig.logs.records.filter { $0.message.contains("drain bound reached") || $0.message.contains("reconciling instead") }
        #expect(drainWarnings.isEmpty, "\(drainWarnings.map(\.message))")
    }

    @Test("a worker process on SIGTERM drains, exits 0, and the next process finishes the rest")
    func sigtermMidLoad() async throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        let configurationPath = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-worker-\(UUID().uuidString).json").path
        try rig.stack.configurationFileText(groupID: rig.groupID).write(toFile: configurationPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: configurationPath) }
        let binary = try BuiltProducts.provisionerPath
        func child(_ name: String) throws -> ChildProcess {
            var environment = rig.stack.environment
            environment["PROVISIONER_WORKER_ID"] = name
            environment["PROVISIONER_LOG__LEVEL"] = "info"
            return try ChildProcess(executable: binary, arguments: ["worker", "--config", configurationPath, "--exit-with-parent"],
                                    environment: environment)
        }

        let first = try child("child-1")
        // The only member: once the warm-up is answered, it owns every partition.
        try EmbeddedStack.warmUp(partitions: rig.stack.partitions, topic: rig.stack.topics.requests, factory: rig.factory,
                                 producer: rig.producer, collector: rig.collector, timeoutMs: 60_000)

        var ids: [String] = []
        for index in 0..<40 {
            let request = try Self.streamRequest(rig, index: index, slowMs: 1_500)
            try rig.send(request)
            ids.append(request.requestID)
        }
        // Mid-load: some answered, slow calls still in flight.
        let someAnswered = rig.collector.wait(timeoutMs: 60_000) { snapshot in ids.filter { snapshot.final($0) != nil }.count >= 10 }
        try #require(someAnswered, "the first worker answered fewer than 10 requests within 60 s")
        first.terminate()
        for index in 40..<80 {
            let request = try Self.streamRequest(rig, index: index, slowMs: 1_500)
            try rig.send(request)
            ids.append(request.requestID)
        }
        let firstExit = try await first.waitForExit(timeout: .seconds(60))
        #expect(firstExit == .exited(0), "\(first.standardErrorLines.suffix(20).joined(separator: "\n"))")
        let second = try child("child-2")
        #expect(rig.waitForFinals(ids, timeoutMs: 120_000), "no final result for \(rig.missingFinals(ids))")
        try rig.expectQuiet(second.standardErrorLines.suffix(15).joined(separator: "\n"))

        // The audit of a request is written after its result is acknowledged: wait for every
        // request's result_published event before reading who received and answered what.
        let audited = rig.collector.wait(timeoutMs: 60_000) { snapshot in
            let published = Set(snapshot.audit.filter { $0.stage == .resultPublished }.compactMap(\.requestID))
            return ids.allSatisfy(published.contains)
        }
        #expect(audited, "result_published audit events missing")
        let snapshot = rig.collector.snapshot
        Self.expectExactlyOneProvisionedResult(ids, snapshot)
        // Draining: whatever the first process received, it answered itself.
        let receivedByFirst = Set(snapshot.audit.filter { $0.stage == .received && $0.worker == "child-1" }.compactMap(\.requestID))
        let publishedByFirst = Set(snapshot.audit.filter { $0.stage == .resultPublished && $0.worker == "child-1" }.compactMap(\.requestID))
        let answeredBySecond = Set(snapshot.audit.filter { $0.stage == .resultPublished && $0.worker == "child-2" }.compactMap(\.requestID))
        let sent = Set(ids)
        #expect(!receivedByFirst.intersection(sent).isEmpty, "the first process received none of the load")
        #expect(!answeredBySecond.intersection(sent).isEmpty, "the second process answered none of the load")
        #expect(receivedByFirst.subtracting(publishedByFirst).isEmpty,
                "the first process left \(receivedByFirst.subtracting(publishedByFirst).count) received requests unanswered")
        #expect(receivedByFirst.intersection(answeredBySecond).isEmpty, "requests the first process had were answered again")
        let firstLog = first.standardErrorLines.joined(separator: "\n")
        #expect(!firstLog.contains("drain bound reached"))
        #expect(firstLog.contains("stop requested: draining"))

        second.terminate()
        let secondExit = try await second.waitForExit(timeout: .seconds(60))
        #expect(secondExit == .exited(0))
    }
}
