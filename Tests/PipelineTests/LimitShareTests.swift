import Testing
@testable import Pipeline

/// The group-wide limit rule (`LimitShare`) and the scheduler under it, with time and partition
/// counts passed in: no broker.
@Suite("Limits shared by assignment", .timeLimit(.minutes(5)))
struct LimitShareTests {
    static let limit = SchedulerSettings.RateLimit(perSecond: 100, burst: 20)

    /// 24 partitions split over `workers` as a sticky assignor would: as evenly as possible.
    static func split(_ total: Int, over workers: Int) -> [Int] {
        (0..<workers).map { total / workers + ($0 < total % workers ? 1 : 0) }
    }

    @Test("limit × owned / total, with floors of one slot and one token, never above the group's")
    func rule() {
        let third = LimitShare(owned: 8, total: 24)
        #expect(abs(third.rate(Self.limit).perSecond - 100.0 / 3) < 1e-9)
        #expect(abs(third.rate(Self.limit).burst - 20.0 / 3) < 1e-9)
        #expect(third.concurrency(30) == 10)
        let sliver = LimitShare(owned: 1, total: 24)
        #expect(sliver.concurrency(4) == 1, "a worker owning a partition always gets a slot")
        #expect(sliver.rate(Self.limit).burst == 1, "and a token of burst")
        let all = LimitShare(owned: 24, total: 24)
        #expect(all.rate(Self.limit) == Self.limit)
        #expect(all.concurrency(30) == 30)
        let none = LimitShare(owned: 0, total: 24)
        #expect(none.concurrency(30) == 0)
        #expect(none.rate(Self.limit).perSecond < 0.001)
        #expect(LimitShare(owned: 3, total: 2).fraction == 1, "a stale total below the owned count counts as the owned count")
        #expect(LimitShare.whole.concurrency(.max) == .max)
        for owned in 0...24 {
            let share = LimitShare(owned: owned, total: 24)
            #expect(share.rate(Self.limit).burst <= Self.limit.burst)
            #expect(share.concurrency(30) <= 30)
        }
    }

    @Test("from 1 to 8 workers and back, the shares add up to the group's rate, bursts to at most the group's bucket plus one per worker")
    func sharesAddUp() {
        for workers in Array(1...8) + Array((1...7).reversed()) {
            let shares = Self.split(24, over: workers).map { LimitShare(owned: $0, total: 24) }
            let rate = shares.map { $0.rate(Self.limit).perSecond }.reduce(0, +)
            #expect(abs(rate - 100) < 1e-6, "\(workers) workers: \(rate)/s")
            let burst = shares.map { $0.rate(Self.limit).burst }.reduce(0, +)
            #expect(burst <= Self.limit.burst + Double(workers), "\(workers) workers: burst \(burst)")
            let slots = shares.map { $0.concurrency(30) }.reduce(0, +)
            #expect(slots <= 30, "\(workers) workers: \(slots) slots")
        }
    }

    @Test("a bucket reconfigured keeps what it earned at the old rate, cut to the new burst, never raised")
    func bucketReconfigure() {
        var bucket = TokenBucket(ratePerSecond: 10, burst: 10, nowMs: 0)
        for _ in 0..<10 { _ = bucket.tryTake(nowMs: 0) }
        bucket.reconfigure(ratePerSecond: 1, burst: 4, nowMs: 500)
        #expect(abs(bucket.available(nowMs: 500) - 4) < 1e-9, "5 earned at 10/s, cut to 4")
        bucket.reconfigure(ratePerSecond: 100, burst: 50, nowMs: 500)
        #expect(abs(bucket.available(nowMs: 500) - 4) < 1e-9, "a larger burst does not fill the bucket")
        #expect(abs(bucket.available(nowMs: 600) - 14) < 1e-9, "the new rate counts from the change")
    }

    /// Workers (each a `WorkScheduler` with its share) offered `offered`/s spread evenly over 24
    /// partitions, for `seconds`, every call ending at once; returns calls started per second.
    static func run(_ schedulers: inout [WorkScheduler<Int>], owned: [Int], offered: Int, seconds: Int, startMs: Int64,
                    nextID: inout UInt64) -> [Int] {
        var perSecond = [Int](repeating: 0, count: seconds)
        let stepMs: Int64 = 10
        let perStep = Double(offered) * Double(stepMs) / 1000
        var carry = [Double](repeating: 0, count: schedulers.count)
        for step in 0..<(Int64(seconds) * 1000 / stepMs) {
            let now = startMs + step * stepMs
            for index in schedulers.indices {
                carry[index] += perStep * Double(owned[index]) / 24
                var decisions: [SchedulerDecision<Int>] = []
                while carry[index] >= 1 {
                    carry[index] -= 1
                    nextID += 1
                    let ticket = SchedulerTicket(id: nextID, key: "k\(nextID)", program: "p", endpoint: "e",
                                                 publishByMs: now + 300, minimumBudgetMs: 50, payload: Int(nextID))
                    decisions += schedulers[index].enqueue(ticket, nowMs: now)
                }
                decisions += schedulers[index].dispatch(nowMs: now)
                for decision in decisions {
                    guard case .start(let ticket, _) = decision else { continue }
                    perSecond[Int((now - startMs) / 1000)] += 1
                    _ = schedulers[index].finish(ticketID: ticket.id, success: true, nowMs: now)
                }
            }
        }
        return perSecond
    }

    @Test("schedulers sharing a 100/s limit, offered 300/s, start at most 100/s in steady state through 3 → 2 → 3 → 8 → 1 workers")
    func schedulersStayWithinQuota() {
        var settings = SchedulerSettings()
        settings.rateLimits = ["p": Self.limit]
        settings.defaultBreaker = nil
        var nextID: UInt64 = 0
        var now: Int64 = 1_000_000
        for workers in [3, 2, 3, 8, 1] {
            let owned = Self.split(24, over: workers)
            // A new member starts a full bucket of its share; a survivor keeps its tokens, cut to its share's burst.
            var schedulers = owned.map { count -> WorkScheduler<Int> in
                var scheduler = WorkScheduler<Int>(settings: settings)
                _ = scheduler.setShare(LimitShare(owned: count, total: 24), nowMs: now)
                return scheduler
            }
            let seconds = Self.run(&schedulers, owned: owned, offered: 300, seconds: 6, startMs: now, nextID: &nextID)
            // The first second may spend the bursts (the group's at most, plus one token per worker).
            #expect(seconds[0] <= 100 + Int(Self.limit.burst) + workers, "\(workers) workers: \(seconds)")
            // Per second, each worker's bucket may carry less than one token over a window's edge.
            for (second, count) in seconds.enumerated().dropFirst() {
                #expect(count <= 100 + workers, "\(workers) workers, second \(second): \(count) calls")
                #expect(count >= 95, "\(workers) workers, second \(second): the quota is used (\(count) calls)")
            }
            let steady = seconds.dropFirst().reduce(0, +)
            #expect(steady <= 100 * (seconds.count - 1) + workers, "\(workers) workers: \(steady) calls in \(seconds.count - 1) s")
            now += 6_000
        }
    }

    @Test("a rebalance inside a worker: its share shrinks at once and grows back, never exceeding the new share")
    func shareChangesInPlace() {
        var settings = SchedulerSettings()
        settings.rateLimits = ["p": Self.limit]
        settings.programLimits = ["p": 30]
        settings.defaultBreaker = nil
        var scheduler = WorkScheduler<Int>(settings: settings)
        _ = scheduler.setShare(LimitShare(owned: 8, total: 24), nowMs: 0)
        #expect(scheduler.programShares["p"]?.maxInFlight == 10)
        var nextID: UInt64 = 0
        var schedulers = [scheduler]
        let third = Self.run(&schedulers, owned: [24], offered: 300, seconds: 4, startMs: 0, nextID: &nextID)
        for count in third.dropFirst() { #expect(count <= 34 && count >= 31, "a third of 100/s: \(third)") }
        _ = schedulers[0].setShare(LimitShare(owned: 12, total: 24), nowMs: 4_000)
        #expect(schedulers[0].programShares["p"]?.maxInFlight == 15)
        let half = Self.run(&schedulers, owned: [24], offered: 300, seconds: 4, startMs: 4_000, nextID: &nextID)
        #expect(half[0] <= 50 + 10, "no refill on the change: \(half)")
        for count in half.dropFirst() { #expect(count <= 51 && count >= 48, "half of 100/s: \(half)") }
        settings.limitsPerWorker = true
        var perWorker = WorkScheduler<Int>(settings: settings)
        _ = perWorker.setShare(LimitShare(owned: 1, total: 24), nowMs: 0)
        #expect(perWorker.share == .whole, "limits_scope worker: the configured limits apply to each worker")
    }
}
