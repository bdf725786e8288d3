import Testing
@testable import Pipeline

@Suite("WorkScheduler", .timeLimit(.minutes(10)))
struct WorkSchedulerTests {
    typealias Ticket = SchedulerTicket<String>

    var nextID: UInt64 = 0

    mutating func ticket(_ name: String, key: String? = nil, program: String = "p", endpoint: String = "e",
                         publishBy: Int64, budget: Int64 = 100) -> Ticket {
        nextID += 1
        return Ticket(id: nextID, key: key ?? name, program: program, endpoint: endpoint,
                      publishByMs: publishBy, minimumBudgetMs: budget, payload: name)
    }

    func started(_ decisions: [SchedulerDecision<String>]) -> [String] {
        decisions.compactMap { if case .start(let t, _) = $0 { return t.payload } else { return nil } }
    }
    func expired(_ decisions: [SchedulerDecision<String>]) -> [String] {
        decisions.compactMap { if case .expire(let t) = $0 { return t.payload } else { return nil } }
    }
    func refused(_ decisions: [SchedulerDecision<String>]) -> [(String, SchedulerRefusal)] {
        decisions.compactMap { if case .refuse(let t, let why) = $0 { return (t.payload, why) } else { return nil } }
    }
    func id(of name: String, in decisions: [SchedulerDecision<String>]) -> UInt64? {
        for d in decisions { if case .start(let t, _) = d, t.payload == name { return t.id } }
        return nil
    }

    @Test("earliest deadline starts first when a slot frees")
    mutating func earliestDeadlineFirst() {
        var settings = SchedulerSettings()
        settings.globalLimit = 1
        var scheduler = WorkScheduler<String>(settings: settings)
        let first = scheduler.enqueue(ticket("running", publishBy: 10_000), nowMs: 0)
        #expect(started(first) == ["running"])
        let check1 = started(scheduler.enqueue(ticket("late", publishBy: 9_000), nowMs: 1)).isEmpty
        #expect(check1)
        let check2 = started(scheduler.enqueue(ticket("urgent", publishBy: 3_000), nowMs: 2)).isEmpty
        #expect(check2)
        let check3 = started(scheduler.enqueue(ticket("middle", publishBy: 5_000), nowMs: 3)).isEmpty
        #expect(check3)
        var order: [String] = []
        var current = id(of: "running", in: first)!
        for _ in 0..<3 {
            let decisions = scheduler.finish(ticketID: current, success: true, nowMs: 10)
            let names = started(decisions)
            #expect(names.count == 1)
            order += names
            current = decisions.compactMap { if case .start(let t, _) = $0 { return t.id } else { return nil } }.first!
        }
        #expect(order == ["urgent", "middle", "late"])
    }

    @Test("arrival ordering serves in arrival order and never sheds")
    mutating func arrivalOrder() {
        var settings = SchedulerSettings()
        settings.globalLimit = 1
        settings.ordering = .arrival
        var scheduler = WorkScheduler<String>(settings: settings)
        let first = scheduler.enqueue(ticket("a", publishBy: 10_000), nowMs: 0)
        _ = scheduler.enqueue(ticket("b", publishBy: 9_000), nowMs: 0)
        _ = scheduler.enqueue(ticket("c", publishBy: 50), nowMs: 0)
        var decisions = scheduler.finish(ticketID: id(of: "a", in: first)!, success: true, nowMs: 1_000)
        #expect(started(decisions) == ["b"])
        #expect(expired(decisions).isEmpty)
        decisions = scheduler.finish(ticketID: id(of: "b", in: decisions)!, success: true, nowMs: 2_000)
        #expect(started(decisions) == ["c"], "the baseline calls even a hopeless request")
    }

    @Test("two tickets with one key never run at once; the second follows in order")
    mutating func perKeyOrdering() {
        var scheduler = WorkScheduler<String>(settings: SchedulerSettings())
        let a = scheduler.enqueue(ticket("card1-a", key: "card1", publishBy: 10_000), nowMs: 0)
        let b = scheduler.enqueue(ticket("card1-b", key: "card1", publishBy: 5_000), nowMs: 0)
        let c = scheduler.enqueue(ticket("card2", key: "card2", publishBy: 10_000), nowMs: 0)
        #expect(started(a) == ["card1-a"])
        #expect(started(b).isEmpty, "same key waits even with an earlier deadline")
        #expect(started(c) == ["card2"], "other keys run in parallel")
        #expect(scheduler.runningCount == 2)
        let after = scheduler.finish(ticketID: id(of: "card1-a", in: a)!, success: true, nowMs: 100)
        #expect(started(after) == ["card1-b"])
    }

    @Test("a ticket waiting behind its key is expired when it becomes infeasible")
    mutating func keyWaiterExpires() {
        var scheduler = WorkScheduler<String>(settings: SchedulerSettings())
        _ = scheduler.enqueue(ticket("slow", key: "k", publishBy: 20_000), nowMs: 0)
        _ = scheduler.enqueue(ticket("waiter", key: "k", publishBy: 1_000, budget: 200), nowMs: 0)
        let wake = scheduler.nextWakeMs(nowMs: 0)
        #expect(wake == 801)
        let check4 = expired(scheduler.dispatch(nowMs: 800)).isEmpty
        #expect(check4)
        let check5 = expired(scheduler.dispatch(nowMs: 801)) == ["waiter"]
        #expect(check5)
        #expect(scheduler.queuedCount == 0)
    }

    @Test("overload: infeasible queued work is shed at the moment it becomes infeasible")
    mutating func shedding() {
        var settings = SchedulerSettings()
        settings.globalLimit = 1
        var scheduler = WorkScheduler<String>(settings: settings)
        _ = scheduler.enqueue(ticket("busy", publishBy: 60_000), nowMs: 0)
        _ = scheduler.enqueue(ticket("doomed", publishBy: 500, budget: 100), nowMs: 0)
        _ = scheduler.enqueue(ticket("fine", publishBy: 50_000), nowMs: 0)
        let check6 = scheduler.nextWakeMs(nowMs: 0) == 401
        #expect(check6)
        let decisions = scheduler.dispatch(nowMs: 401)
        #expect(expired(decisions) == ["doomed"])
        #expect(started(decisions).isEmpty)
        #expect(scheduler.queuedCount == 1)
    }

    @Test("a full program bulkhead holds back only that program")
    mutating func programBulkhead() {
        var settings = SchedulerSettings()
        settings.globalLimit = 10
        settings.programLimits = ["stalled": 2]
        var scheduler = WorkScheduler<String>(settings: settings)
        var startedNames: [String] = []
        for index in 0..<5 {
            startedNames += started(scheduler.enqueue(ticket("s\(index)", program: "stalled", endpoint: "slow", publishBy: 20_000), nowMs: 0))
        }
        for index in 0..<3 {
            startedNames += started(scheduler.enqueue(ticket("h\(index)", program: "healthy", endpoint: "fast", publishBy: 20_000), nowMs: 0))
        }
        #expect(startedNames == ["s0", "s1", "h0", "h1", "h2"])
        #expect(scheduler.runningPerProgram["stalled"] == 2)
        #expect(scheduler.queuedCount == 3)
    }

    @Test("peaks: most calls in flight (in all, per program) and tickets waiting, kept after the counts fall; a ticket started at once never counts as waiting")
    mutating func peaks() {
        var settings = SchedulerSettings()
        settings.globalLimit = 3
        settings.programLimits = ["a": 2]
        var scheduler = WorkScheduler<String>(settings: settings)
        let first = scheduler.enqueue(ticket("a0", program: "a", publishBy: 20_000), nowMs: 0)
        #expect(scheduler.peaks == SchedulerPeaks(running: 1, queued: 0, runningPerProgram: ["a": 1]))
        var ids = [id(of: "a0", in: first)!]
        for name in ["a1", "a2", "b0", "b1"] {
            let decisions = scheduler.enqueue(ticket(name, program: String(name.prefix(1)), publishBy: 20_000), nowMs: 0)
            ids += started(decisions).compactMap { id(of: $0, in: decisions) }
        }
        // a0, a1 and b0 run (the global limit 3, program a's 2); a2 and b1 wait.
        #expect(scheduler.peaks == SchedulerPeaks(running: 3, queued: 2, runningPerProgram: ["a": 2, "b": 1]))
        for ticketID in ids { _ = scheduler.finish(ticketID: ticketID, success: true, nowMs: 1) }
        #expect(scheduler.runningCount < 3 && scheduler.queuedCount == 0)
        #expect(scheduler.peaks.running == 3 && scheduler.peaks.queued == 2 && scheduler.peaks.runningPerProgram["a"] == 2)
    }

    @Test("an endpoint bulkhead caps calls to that endpoint across programs")
    mutating func endpointBulkhead() {
        var settings = SchedulerSettings()
        settings.endpointLimits = ["imprint": 1]
        var scheduler = WorkScheduler<String>(settings: settings)
        let a = started(scheduler.enqueue(ticket("a", program: "p1", endpoint: "imprint", publishBy: 9_000), nowMs: 0))
        let b = started(scheduler.enqueue(ticket("b", program: "p2", endpoint: "imprint", publishBy: 9_000), nowMs: 0))
        let c = started(scheduler.enqueue(ticket("c", program: "p2", endpoint: "dcs", publishBy: 9_000), nowMs: 0))
        #expect(a == ["a"])
        #expect(b.isEmpty)
        #expect(c == ["c"])
    }

    @Test("an open breaker refuses at once, then probes and closes")
    mutating func breakerLifecycle() {
        var settings = SchedulerSettings()
        var breaker = CircuitBreaker.Settings()
        breaker.minimumCalls = 4
        breaker.failureRateThreshold = 0.5
        breaker.openDurationMs = 1_000
        breaker.halfOpenProbes = 2
        settings.defaultBreaker = breaker
        var scheduler = WorkScheduler<String>(settings: settings)
        var now: Int64 = 0
        for index in 0..<4 {
            let d = scheduler.enqueue(ticket("f\(index)", publishBy: 100_000), nowMs: now)
            _ = scheduler.finish(ticketID: id(of: "f\(index)", in: d)!, success: false, nowMs: now)
            now += 10
        }
        #expect(scheduler.breakerStates["e"] == .open)
        #expect(scheduler.takeBreakerChanges().map(\.state) == [.open])
        let refusedNow = refused(scheduler.enqueue(ticket("r", publishBy: 100_000), nowMs: now))
        #expect(refusedNow.map(\.0) == ["r"] && refusedNow.first?.1 == .breakerOpen)
        now += 1_000
        let p1 = scheduler.enqueue(ticket("p1", publishBy: 100_000), nowMs: now)
        let p2 = scheduler.enqueue(ticket("p2", publishBy: 100_000), nowMs: now)
        let p3 = scheduler.enqueue(ticket("p3", publishBy: 100_000), nowMs: now)
        #expect(p1.contains { if case .start(_, true) = $0 { return true } else { return false } })
        #expect(started(p2) == ["p2"])
        #expect(refused(p3).map(\.0) == ["p3"], "only the probes pass while half-open")
        _ = scheduler.finish(ticketID: id(of: "p1", in: p1)!, success: true, nowMs: now)
        _ = scheduler.finish(ticketID: id(of: "p2", in: p2)!, success: true, nowMs: now)
        #expect(scheduler.breakerStates["e"] == .closed)
        #expect(scheduler.takeBreakerChanges().map(\.state) == [.halfOpen, .closed])
    }

    @Test("rate limit: waits for a token that comes in time, refuses when it would come too late")
    mutating func rateLimit() {
        var settings = SchedulerSettings()
        settings.rateLimits = ["p": .init(perSecond: 10, burst: 1)]
        var scheduler = WorkScheduler<String>(settings: settings)
        let check7 = started(scheduler.enqueue(ticket("first", publishBy: 10_000), nowMs: 0)) == ["first"]
        #expect(check7)
        let check8 = started(scheduler.enqueue(ticket("second", publishBy: 10_000), nowMs: 0)).isEmpty
        #expect(check8)
        let check9 = scheduler.nextWakeMs(nowMs: 0) == 100
        #expect(check9)
        let check10 = started(scheduler.dispatch(nowMs: 100)) == ["second"]
        #expect(check10)
        let tooLate = refused(scheduler.enqueue(ticket("hurried", publishBy: 250, budget: 100), nowMs: 100))
        #expect(tooLate.map(\.0) == ["hurried"] && tooLate.first?.1 == .rateLimited)
    }

    @Test("removing waiting tickets of revoked partitions releases their keys")
    mutating func removeWaiting() {
        var settings = SchedulerSettings()
        settings.globalLimit = 1
        var scheduler = WorkScheduler<String>(settings: settings)
        let a = scheduler.enqueue(ticket("keep-running", key: "x", publishBy: 9_000), nowMs: 0)
        _ = scheduler.enqueue(ticket("revoked-1", key: "y", publishBy: 9_000), nowMs: 0)
        _ = scheduler.enqueue(ticket("revoked-2", key: "y", publishBy: 9_000), nowMs: 0)
        _ = scheduler.enqueue(ticket("other", key: "z", publishBy: 9_500), nowMs: 0)
        let removed = scheduler.removeWaiting { $0.payload.hasPrefix("revoked") }
        #expect(Set(removed.map(\.payload)) == ["revoked-1", "revoked-2"])
        #expect(scheduler.queuedCount == 1)
        let next = scheduler.finish(ticketID: id(of: "keep-running", in: a)!, success: true, nowMs: 1)
        #expect(started(next) == ["other"])
        let check11 = started(scheduler.enqueue(ticket("y-again", key: "y", publishBy: 9_000), nowMs: 2)).isEmpty
        #expect(check11)
    }
}
