import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Synchronization
import Testing
import TestSupport

/// A program's rate limit is the group's, shared by assignment, through rebalances; an
/// answered request is recognised as a duplicate after a restart, from the markers topic.
///
/// The quota test (`quotaAcrossProcesses`, GroupLimitTests+Processes.swift) runs three
/// `provisioner worker` processes, one killed with SIGKILL; the duplicate-horizon tests use
/// in-process workers (each with its own consumer, producer, scheduler and HTTP client), all
/// against the embedded broker and the simulator over HTTP.
@Suite("End to end: group-wide limits and the duplicate horizon", .serialized, .timeLimit(.minutes(10)))
struct GroupLimitTests {
    static let program = "demo-imprint"
    static let limit = SchedulerSettings.RateLimit(perSecond: 100, burst: 10)

    /// Offers `perSecond` requests of the limited program from its own thread until stopped.
    final class Offer: Sendable {
        private let stopped = Mutex(false)
        private let done = DispatchSemaphore(value: 0)
        private let sent = Mutex(0)

        init(_ rig: PipelineRig, perSecond: Int) {
            // The rig's factory and producer are thread-safe; the rig itself is only read here.
            nonisolated(unsafe) let rig = rig
            let thread = Thread { [self] in
                let started = Timestamps.nowMs()
                var index = 0
                while !stopped.withLock({ $0 }) {
                    let due = started + Int64(index) * 1000 / Int64(perSecond)
                    let now = Timestamps.nowMs()
                    // Pacing to the offered rate (request `index` is due at its time), not a wait for a condition.
                    if due > now { usleep(UInt32(min(due - now, 20)) * 1000); continue }
                    if let request = try? rig.factory.provision(program: GroupLimitTests.program, wallet: .googlePay,
                                                                cardID: "pm_quota\(index)_\(Crypto.hex(Crypto.randomBytes(4)))") {
                        try? rig.send(request)
                        sent.withLock { $0 += 1 }
                    }
                    index += 1
                }
                done.signal()
            }
            thread.start()
        }

        var count: Int { sent.withLock { $0 } }

        /// Stops the thread and waits for it (once; later calls return at once).
        func stop() {
            let wasStopped = stopped.withLock { stopped in
                defer { stopped = true }
                return stopped
            }
            if !wasStopped { done.wait() }
        }
    }

    /// Answers a request, restarts the worker (a new one in its place), produces the very same
    /// request again (`afterHorizon`: once the answer's horizon has ended), and returns the
    /// simulator calls for its card and whether the copy was audited `duplicate_ignored`.
    static func answerRestartResend(horizonSeconds: Int64, afterHorizon: Bool) throws -> (calls: Int, duplicateIgnored: Bool, final: ResultStatus?) {
        let rig = try PipelineRig(partitions: 2)
        defer { rig.stop() }
        let horizon: (inout WorkerConfiguration) -> Void = { $0.duplicateHorizonMs = horizonSeconds * 1000 }
        let first = try rig.startWorker("before-restart", adjust: horizon)
        try rig.formGroupAndWarmUp()
        let card = "pm_again_\(Crypto.hex(Crypto.randomBytes(4)))"
        // Without started_at the window starts when the record is produced: the copy sent later is
        // as fresh as the first, and would be called if it were not recognised.
        let request = try rig.factory.provision(program: program, wallet: .googlePay, cardID: card, omitStartedAt: true)
        try rig.send(request)
        try #require(rig.waitForFinals([request.requestID]), "the request was not answered")
        let final = rig.collector.snapshot.final(request.requestID)?.status
        try rig.expectQuiet("before the restart")
        // Quiet: the request's offset is committed, so every `completed` marker for it (the
        // answer's time in the horizon) was stamped before now.
        let answeredByMs = Timestamps.nowMs()
        rig.stack.stopWorker(first)
        if afterHorizon {
            // The horizon counts an answer until its marker's time plus the horizon.
            let horizonEndsMs = answeredByMs + horizonSeconds * 1000
            try #require(PipelineRig.wait(timeoutMs: horizonSeconds * 1000 + 10_000) { Timestamps.nowMs() > horizonEndsMs },
                         "the answer's horizon did not end by the clock")
        }
        _ = try rig.startWorker("after-restart", adjust: horizon)
        try #require(rig.stack.waitForGroup(timeoutMs: 60_000), "the restarted worker did not get the partitions")
        try rig.send(request)
        let requestID = request.requestID
        // Either the copy is ignored, or it is answered a second time.
        _ = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            snapshot.audit.contains { $0.requestID == requestID && $0.stage == .duplicateIgnored } || (snapshot.results[requestID]?.count ?? 0) >= 2
        }
        let ignored = !rig.audit(request.requestID, .duplicateIgnored).isEmpty
        try rig.expectQuiet("after the copy")
        return (rig.simulatorCalls(card: card).reduce(0) { $0 + $1.count }, ignored, final)
    }

    @Test("a request answered, the worker restarted, the same request produced again: duplicate_ignored, no second issuer call")
    func duplicateAfterRestart() throws {
        let outcome = try Self.answerRestartResend(horizonSeconds: 86_400, afterHorizon: false)
        #expect(outcome.final == .provisioned)
        #expect(outcome.duplicateIgnored, "the copy was not recognised after the restart")
        #expect(outcome.calls == 1, "the issuer was called \(outcome.calls) times")
    }

    @Test("the same, produced again after a 2 s horizon ended: called again (the horizon decides)")
    func horizonEnds() throws {
        let outcome = try Self.answerRestartResend(horizonSeconds: 2, afterHorizon: true)
        #expect(!outcome.duplicateIgnored, "a copy after the horizon was ignored")
        #expect(outcome.calls == 2, "the issuer was called \(outcome.calls) times")
    }

    @Test("a flood of distinct answered ids: the program's share of the horizon budget stays within its bound, the evictions are counted")
    func floodStaysBounded() throws {
        let rig = try PipelineRig(partitions: 2)
        defer { rig.stop() }
        // Five shares (the four demo programs and `other`), each with room for 80 answers.
        let bound = 80
        let budget = 5 * AnsweredIndex.allocatedBytes(maxEntries: bound)
        let worker = try rig.startWorker("flood") { $0.duplicateIndexMaxBytes = budget }
        try rig.formGroupAndWarmUp()
        let metrics = try #require(rig.metrics(of: worker))
        var ids: [String] = []
        for index in 0..<300 {
            let request = try rig.factory.provision(program: Self.program, wallet: .googlePay, cardID: "pm_flood\(index)_\(Crypto.hex(Crypto.randomBytes(4)))")
            try rig.send(request)
            ids.append(request.requestID)
        }
        try #require(rig.waitForFinals(ids), "missing: \(rig.missingFinals(ids).prefix(5))")
        try rig.expectQuiet()
        let entries = metrics.total("provisioner_duplicate_index_entries")
        let evicted = metrics.value("provisioner_duplicate_index_evictions_total", labels: ["program": Self.program]) ?? 0
        #expect(entries <= Double(bound + 2), "\(entries) entries over 2 partitions, the program's share bounded at \(bound) (and 2 warm-up answers)")
        #expect(entries >= Double(bound / 2), "the index holds answered ids: \(entries)")
        #expect((metrics.value("provisioner_duplicate_index_bytes") ?? .infinity) <= Double(budget))
        // 300 flood + up to 2 warm-up answers of this program, at most `bound` kept.
        #expect(evicted >= Double(300 - bound), "\(evicted) evictions counted")
    }
}
