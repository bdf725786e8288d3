import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing

/// An answer given without a `started` marker (expired, rejected, refused by a
/// breaker or rate limit, marker write failed) also leaves a `completed` marker, so an owner that
/// gets the request again before its offset was committed ignores it instead of answering anew.
@Suite("End to end: every published result leaves a completed marker", .serialized, .timeLimit(.minutes(10)))
struct CompletedMarkerTests {
    @Test("next owner before the commit of an answer given without a call: it ignores the request instead of answering again")
    func nextOwnerBeforeCommitOfAnswerWithoutCall() throws {
        let rig = try PipelineRig(partitions: 1)
        defer { rig.stop() }
        try rig.startWorker("worker-1")
        try #require(rig.stack.waitForGroup(timeoutMs: 60_000))
        // Past its deadline on arrival: answered `expired` at once, no issuer call, no `started` marker.
        let now = Timestamps.nowMs()
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay,
                                                cardID: "pm_nomarker_\(Crypto.hex(Crypto.randomBytes(4)))",
                                                startedAtMs: now - 60_000, deadlineMs: now - 30_000)
        let id = request.requestID
        try rig.send(request)
        try #require(rig.waitForFinals([id], timeoutMs: 60_000))
        let first = try #require(rig.collector.snapshot.final(id))
        #expect(rig.audit(id, .issuerCallStarted).isEmpty, "no call was expected for \(first.status)")

        // The next owner gets the request as if the first never committed it: a worker of another
        // group reads the requests partition from its start and the markers partition from its start.
        let configuration = try rig.stack.configuration(groupID: "\(rig.groupID)-next-owner", workerID: "worker-2")
        let next = try rig.stack.startWorker(configuration, logger: Logger(label: "worker-2", minimumLevel: .info, handler: rig.logs))
        let settled = rig.collector.wait(timeoutMs: 60_000) { snapshot in
            (snapshot.results[id]?.count ?? 0) > 1 || snapshot.audit.contains { $0.requestID == id && $0.stage == .duplicateIgnored }
        }
        #expect(settled, "the next owner neither answered nor ignored the request")
        let results = rig.collector.snapshot.results[id]?.map(\.result.status) ?? []
        #expect(results.count == 1, "answered again by the next owner: \(results)")
        #expect(!rig.audit(id, .duplicateIgnored).isEmpty)
        rig.stack.stopWorker(next)
    }
}
