import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Synchronization
import Testing
import TestSupport

/// Issue 19: a program's rate limit is the group's, shared by assignment, through rebalances; an
/// answered request is recognised as a duplicate after a restart, from the markers topic.
///
/// Three workers in one test process (in-process workers, each with its own consumer, producer,
/// scheduler and HTTP client: the group and its rebalances are real, only the process is shared),
/// against the embedded broker and the simulator over HTTP.
@Suite("End to end: group-wide limits and the duplicate horizon", .serialized, .timeLimit(.minutes(10)))
struct GroupLimitTests {
    static let program = "demo-imprint"
    static let limit = SchedulerSettings.RateLimit(perSecond: 100, burst: 10)

    /// Issuer calls the simulator has seen, all cards.
    static func simulatorCalls(_ rig: PipelineRig) -> Int {
        rig.stack.simulator.calls.reduce(0) { $0 + $1.count }
    }

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

    /// Calls per second the simulator saw over `seconds` (one-second samples), and the offered rate.
    static func measure(_ rig: PipelineRig, _ offer: Offer, seconds: Int) -> (perWindow: [Int], offered: Double) {
        var samples = [simulatorCalls(rig)]
        let sentBefore = offer.count
        let started = Timestamps.nowMs()
        for second in 1...seconds {
            let due = started + Int64(second) * 1000
            while Timestamps.nowMs() < due { usleep(5_000) }
            samples.append(simulatorCalls(rig))
        }
        let elapsed = Double(Timestamps.nowMs() - started) / 1000
        return (zip(samples.dropFirst(), samples).map { $0 - $1 }, Double(offer.count - sentBefore) / elapsed)
    }

    static func limited(_ configuration: inout WorkerConfiguration) {
        configuration.programs[program]?.rateLimit = limit
        configuration.scheduler.rateLimits[program] = limit
        // A revoke drain longer than the demo's 4.5 s session timeout gets the member's partitions
        // lost at the mock coordinator under this backlog; a short one keeps the rebalances clean.
        configuration.revokeDrainMs = 1_000
        configuration.shutdownDrainMs = 2_000
    }

    /// The rate-share gauge of each worker.
    static func shares(_ rig: PipelineRig, _ workers: [Worker]) -> [Double] {
        workers.map { rig.metrics(of: $0)?.total("provisioner_limit_share_rate_per_second", matching: ["program": program]) ?? -1 }
    }

    /// Waits until every worker's share is `expected` and has stayed so for 5 s (a join under
    /// load can take several rebalance rounds with the mock broker's coordinator).
    static func waitForStableShares(_ rig: PipelineRig, _ workers: [Worker], expected: Double) -> Bool {
        var since: Int64?
        return PipelineRig.wait(timeoutMs: 120_000) {
            guard shares(rig, workers).allSatisfy({ abs($0 - expected) < 0.01 }) else {
                since = nil
                return false
            }
            let now = Timestamps.nowMs()
            if since == nil { since = now }
            return now - since! >= 5_000
        }
    }

    @Test("three workers, a program limited to 100/s offered 300/s: ≤ 100/s before, during and after one leaves and another joins")
    func quotaThroughRebalances() throws {
        let rig = try PipelineRig(partitions: 6)
        defer { rig.stop() }
        var workers = try (1...3).map { try rig.startWorker("quota-\($0)", level: .warning, adjust: Self.limited) }
        try rig.formGroupAndWarmUp()
        let group = PipelineRig.wait(timeoutMs: 20_000) { Self.shares(rig, workers).allSatisfy { abs($0 - 100.0 / 3) < 0.01 } }
        #expect(group, "each of three workers owns 2 of 6 partitions: a third of 100/s each, got \(Self.shares(rig, workers))")

        let offer = Offer(rig, perSecond: 300)
        defer { offer.stop() }
        // Windows of 5 s after 3 s to settle (queued tickets waiting for tokens, the first bursts).
        // Tolerance: the group's burst (10) plus one token per worker carried over a window's edge,
        // i.e. 5 × 100 + 10 + 3 = 513 calls per 5 s (102.6/s).
        let windowSeconds = 5
        let tolerance = 10 + 3
        func steady(_ phase: String) -> [Int] {
            usleep(3_000_000)
            let (seconds, offered) = Self.measure(rig, offer, seconds: 2 * windowSeconds)
            let windows = stride(from: 0, to: seconds.count, by: windowSeconds).map { seconds[$0..<min($0 + windowSeconds, seconds.count)].reduce(0, +) }
            for window in windows {
                #expect(window <= 100 * windowSeconds + tolerance, "\(phase): \(window) calls in \(windowSeconds) s (per second: \(seconds))")
            }
            #expect(offered > 200, "\(phase): the load generator kept up (\(offered)/s offered)")
            return windows
        }
        let three = steady("three workers")

        // One worker leaves: the two survivors own 3 of 6 each and take half of 100/s each.
        let leaving = workers.removeLast()
        rig.stack.stopWorker(leaving)
        // A rebalance under load: revokes drain (rebalance.drain_timeout_ms) and marker catch-ups run first.
        let rebalanced = Self.waitForStableShares(rig, workers, expected: 50)
        try #require(rebalanced, "the survivors took the leaver's share: \(Self.shares(rig, workers))")
        let two = steady("two workers")
        // Without taking the leaver's share two workers could make only 2 × 33.3 = 66.7/s.
        #expect(two.allSatisfy { $0 > 75 * windowSeconds }, "the survivors use the whole quota: \(two)")

        // Back to three.
        workers.append(try rig.startWorker("quota-4", level: .warning, adjust: Self.limited))
        let back = Self.waitForStableShares(rig, workers, expected: 100.0 / 3)
        try #require(back, "three workers again, a third each: \(Self.shares(rig, workers)), partitions \(workers.map(\.assignedPartitionCount))")
        let threeAgain = steady("three workers again")
        offer.stop()
        if ProcessInfo.processInfo.environment["GROUP_LIMIT_LOGS"] != nil { for line in rig.logs.renderedLines { print(line) } }
        #expect(three.allSatisfy { $0 > 75 * windowSeconds }, "the quota is used: \(three)")
        // After the re-join the mock coordinator keeps losing and re-assigning partitions for a
        // while under this backlog (see the report of issue 19): how much of the quota the group
        // uses then is not held here, only that it stays within it (above) with a third each.
        #expect(threeAgain.reduce(0, +) > 0, "work goes on after the re-join: \(threeAgain)")
        // The excess waited for tokens until it expired (or was refused): answered, never sent.
        #expect(Double(Self.simulatorCalls(rig)) < 0.5 * Double(offer.count), "\(Self.simulatorCalls(rig)) calls for \(offer.count) offered")
    }

    /// Answers a request, restarts the worker (a new one in its place), produces the very same
    /// request again after `waitMs`, and returns the simulator calls for its card and whether the
    /// copy was audited `duplicate_ignored`.
    static func answerRestartResend(horizonSeconds: Int64, waitMs: Int64) throws -> (calls: Int, duplicateIgnored: Bool, final: ResultStatus?) {
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
        rig.stack.stopWorker(first)
        usleep(UInt32(waitMs) * 1000)
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
        let outcome = try Self.answerRestartResend(horizonSeconds: 86_400, waitMs: 0)
        #expect(outcome.final == .provisioned)
        #expect(outcome.duplicateIgnored, "the copy was not recognised after the restart")
        #expect(outcome.calls == 1, "the issuer was called \(outcome.calls) times")
    }

    @Test("the same, produced again after a 2 s horizon ended: called again (the horizon decides)")
    func horizonEnds() throws {
        let outcome = try Self.answerRestartResend(horizonSeconds: 2, waitMs: 3_000)
        #expect(!outcome.duplicateIgnored, "a copy after the horizon was ignored")
        #expect(outcome.calls == 2, "the issuer was called \(outcome.calls) times")
    }

    @Test("a flood of distinct answered ids: each partition's index stays within its bound, the evictions are counted")
    func floodStaysBounded() throws {
        let rig = try PipelineRig(partitions: 2)
        defer { rig.stop() }
        let bound = 40
        let worker = try rig.startWorker("flood") { $0.duplicateIndexMaxEntriesPerPartition = bound }
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
        let evicted = metrics.total("provisioner_duplicate_index_evictions_total")
        #expect(entries <= Double(2 * bound), "\(entries) entries over 2 partitions bounded at \(bound)")
        #expect(entries >= Double(bound), "the index holds answered ids: \(entries)")
        // 300 flood + 2 warm-up answers, at most 2 × bound kept.
        #expect(evicted >= Double(302 - 2 * bound), "\(evicted) evictions counted")
    }
}
