/// Decides which request calls its issuer next.
///
/// A plain value type: every mutating method takes the current time and returns the decisions to
/// carry out, so the driver runs side effects outside its lock and tests drive time by hand.
///
/// - Earliest deadline first among ready tickets (or arrival order in the `.arrival` baseline).
/// - Per-key ordering: a ticket whose key is queued or running waits behind it, in arrival order.
/// - Bulkheads: a global limit, and limits per program and per issuer endpoint; a full bulkhead
///   holds back only its own class, so a stalled issuer cannot take other programs' slots.
/// - Shedding: a ticket that can no longer start with its minimum budget is expired, whether it
///   waits in a class queue or behind its key, at the moment it becomes infeasible.
/// - Gates: an open breaker refuses at once; a program without a rate-limit token waits for one
///   when it comes in time, else is refused `rate_limited`.
public struct WorkScheduler<Payload: Sendable>: Sendable {
    /// The settings in force.
    public let settings: SchedulerSettings

    private struct ClassID: Hashable, Sendable {
        var program: String
        var endpoint: String
    }

    private var classes: [ClassID: PriorityHeap<SchedulerTicket<Payload>>] = [:]
    private var keys = KeyQueues<Payload>()
    private var running: [UInt64: (ticket: SchedulerTicket<Payload>, isProbe: Bool)] = [:]
    private var runningByProgram: [String: Int] = [:]
    private var runningByEndpoint: [String: Int] = [:]
    private var breakers: [String: CircuitBreaker] = [:]
    private var buckets: [String: TokenBucket] = [:]
    private var queued = 0
    private var classAdded = false
    private var breakerChanges: [(endpoint: String, state: CircuitBreaker.State)] = []
    /// The most calls in flight and tickets waiting at once since the scheduler was created.
    public private(set) var peaks = SchedulerPeaks()
    /// This worker's share of the programs' group-wide limits (`.whole` until a rebalance says otherwise).
    public private(set) var share: LimitShare = .whole

    /// Creates an empty scheduler.
    public init(settings: SchedulerSettings) {
        self.settings = settings
    }

    // MARK: - Observation

    /// Tickets waiting (in class queues or behind their key).
    public var queuedCount: Int { queued }
    /// Calls in flight.
    public var runningCount: Int { running.count }
    /// Calls in flight per program.
    public var runningPerProgram: [String: Int] { runningByProgram }
    /// Calls in flight per endpoint.
    public var runningPerEndpoint: [String: Int] { runningByEndpoint }
    /// Breaker state per endpoint that has seen calls.
    public var breakerStates: [String: CircuitBreaker.State] { breakers.mapValues(\.state) }

    /// Rate-limit tokens available per program, now.
    public mutating func tokensAvailable(nowMs: Int64) -> [String: Double] {
        var result: [String: Double] = [:]
        for program in buckets.keys { result[program] = buckets[program]!.available(nowMs: nowMs) }
        return result
    }

    /// This worker's rate (calls per second) and bulkhead per program with a limit, under the current share.
    public var programShares: [String: (perSecond: Double?, maxInFlight: Int?)] {
        var result: [String: (perSecond: Double?, maxInFlight: Int?)] = [:]
        for (program, limit) in settings.rateLimits { result[program] = (share.rate(limit).perSecond, nil) }
        for program in settings.programLimits.keys {
            result[program] = (result[program]?.perSecond, programLimit(program))
        }
        return result
    }

    // MARK: - Changes

    /// Takes a new share of the group-wide program limits (a rebalance changed the partitions
    /// owned): buckets change rate and burst from now (tokens held are cut, never raised), bulkheads
    /// their size (calls running above a smaller one finish; no new one starts until below it).
    /// Ignored when `settings.limitsPerWorker`. Returns what can start now.
    public mutating func setShare(_ share: LimitShare, nowMs: Int64) -> [SchedulerDecision<Payload>] {
        guard !settings.limitsPerWorker else { return [] }
        self.share = share
        for program in Array(buckets.keys) {
            guard let limit = settings.rateLimits[program] else { continue }
            let mine = share.rate(limit)
            buckets[program]!.reconfigure(ratePerSecond: mine.perSecond, burst: mine.burst, nowMs: nowMs)
        }
        return dispatch(nowMs: nowMs)
    }


    /// Adds a ticket and returns what to do now.
    public mutating func enqueue(_ ticket: SchedulerTicket<Payload>, nowMs: Int64) -> [SchedulerDecision<Payload>] {
        queued += 1
        if keys.admit(ticket, tracksExpiry: settings.ordering == .earliestDeadlineFirst) { pushReady(ticket) }
        // After dispatch: a ticket started at once never waited.
        let decisions = dispatch(nowMs: nowMs)
        peaks.queued = max(peaks.queued, queued)
        return decisions
    }

    /// Reports that a started call ended. `success` feeds the endpoint's breaker: true for any
    /// definitive issuer answer, false for timeouts, transport failures and 5xx; nil when no call
    /// was made after all (the slot is simply returned).
    public mutating func finish(ticketID: UInt64, success: Bool?, nowMs: Int64) -> [SchedulerDecision<Payload>] {
        guard let entry = running.removeValue(forKey: ticketID) else { return [] }
        let ticket = entry.ticket
        runningByProgram[ticket.program, default: 1] -= 1
        runningByEndpoint[ticket.endpoint, default: 1] -= 1
        if var breaker = breakers[ticket.endpoint] {
            if let success {
                if let newState = breaker.record(success: success, wasProbe: entry.isProbe, nowMs: nowMs) {
                    breakerChanges.append((ticket.endpoint, newState))
                }
            } else if entry.isProbe {
                breaker.releaseProbe()
            }
            breakers[ticket.endpoint] = breaker
        }
        releaseKey(ticket.key)
        return dispatch(nowMs: nowMs)
    }

    /// Breaker state changes since the last call, oldest first (for logs, audit and metrics).
    public mutating func takeBreakerChanges() -> [(endpoint: String, state: CircuitBreaker.State)] {
        defer { breakerChanges.removeAll() }
        return breakerChanges
    }

    /// Removes waiting tickets matching `predicate` (their partitions were revoked): they are
    /// neither started nor answered. Running tickets are not affected.
    public mutating func removeWaiting(where predicate: (SchedulerTicket<Payload>) -> Bool) -> [SchedulerTicket<Payload>] {
        var removed = keys.removeWaiting(where: predicate)
        for id in Array(classes.keys) {
            let gone = classes[id]!.removeAll(where: predicate)
            for ticket in gone {
                releaseKey(ticket.key)
            }
            removed += gone
        }
        queued -= removed.count
        return removed
    }

    /// Expires what can no longer make its deadline, refuses what a gate stops, and starts what
    /// fits; call when woken.
    public mutating func dispatch(nowMs: Int64) -> [SchedulerDecision<Payload>] {
        var decisions: [SchedulerDecision<Payload>] = []
        expireKeyWaiters(nowMs: nowMs, into: &decisions)
        while true {
            repeat {
                classAdded = false
                sweepHeads(nowMs: nowMs, into: &decisions)
            } while classAdded
            guard running.count < settings.globalLimit, let chosen = chooseNext(nowMs: nowMs) else { break }
            let ticket = classes[chosen]!.popFirst()!
            if classes[chosen]!.isEmpty { classes[chosen] = nil }
            queued -= 1
            var isProbe = false
            if var breaker = breakerFor(ticket.endpoint) {
                let (permission, change) = breaker.permission(nowMs: nowMs)
                isProbe = permission == .probe
                if let change { breakerChanges.append((ticket.endpoint, change)) }
                breakers[ticket.endpoint] = breaker
            }
            if settings.rateLimits[ticket.program] != nil {
                _ = buckets[ticket.program]!.tryTake(nowMs: nowMs)
            }
            running[ticket.id] = (ticket, isProbe)
            runningByProgram[ticket.program, default: 0] += 1
            peaks.running = max(peaks.running, running.count)
            if let inProgram = runningByProgram[ticket.program], inProgram > peaks.runningPerProgram[ticket.program, default: 0] {
                peaks.runningPerProgram[ticket.program] = inProgram
            }
            runningByEndpoint[ticket.endpoint, default: 0] += 1
            decisions.append(.start(ticket, isProbe: isProbe))
        }
        return decisions
    }

    /// When the driver must call `dispatch` again at the latest, even if nothing else happens:
    /// the next moment a waiting ticket becomes infeasible, a token arrives, or a breaker half-opens.
    public mutating func nextWakeMs(nowMs: Int64) -> Int64? {
        var wake: Int64?
        func consider(_ time: Int64) { wake = min(wake ?? time, time) }
        if settings.ordering == .earliestDeadlineFirst, let at = keys.nextExpiryMs { consider(at + 1) }
        for (id, heap) in classes {
            guard let head = heap.first else { continue }
            if settings.ordering == .earliestDeadlineFirst { consider(head.latestStartMs + 1) }
            if settings.rateLimits[id.program] != nil { consider(nextTokenMs(id.program, nowMs: nowMs)) }
        }
        return wake
    }

    // MARK: - Internals

    private mutating func pushReady(_ ticket: SchedulerTicket<Payload>) {
        let id = ClassID(program: ticket.program, endpoint: ticket.endpoint)
        if classes[id] == nil {
            classAdded = true
            classes[id] = settings.ordering == .earliestDeadlineFirst
                ? PriorityHeap { ($0.publishByMs, $0.id) < ($1.publishByMs, $1.id) }
                : PriorityHeap { $0.id < $1.id }
        }
        classes[id]!.insert(ticket)
    }

    /// The key's current ticket is gone: the next one waiting behind it becomes ready.
    private mutating func releaseKey(_ key: String) {
        if let next = keys.release(key) { pushReady(next) }
    }

    /// Expires the tickets waiting behind their key that can no longer start in time.
    private mutating func expireKeyWaiters(nowMs: Int64, into decisions: inout [SchedulerDecision<Payload>]) {
        for ticket in keys.expire(nowMs: nowMs) {
            queued -= 1
            decisions.append(.expire(ticket))
        }
    }

    /// Pops class heads that cannot run at all: infeasible (expire), breaker open or no token in
    /// time (refuse). Runs whatever the free capacity, so answers never wait for a slot.
    private mutating func sweepHeads(nowMs: Int64, into decisions: inout [SchedulerDecision<Payload>]) {
        for id in Array(classes.keys) {
            while let head = classes[id]?.first {
                if settings.ordering == .earliestDeadlineFirst && nowMs > head.latestStartMs {
                    drop(id, as: .expire(head), into: &decisions)
                } else if let breaker = breakerFor(head.endpoint), breaker.wouldReject(nowMs: nowMs) {
                    drop(id, as: .refuse(head, .breakerOpen), into: &decisions)
                } else if settings.rateLimits[id.program] != nil,
                          nextTokenMs(id.program, nowMs: nowMs) > max(head.latestStartMs, nowMs) {
                    drop(id, as: .refuse(head, .rateLimited), into: &decisions)
                } else {
                    break
                }
            }
            if classes[id]?.isEmpty == true { classes[id] = nil }
        }
    }

    /// Picks the class whose head should start next among those with a token and free bulkheads.
    private mutating func chooseNext(nowMs: Int64) -> ClassID? {
        var best: ClassID?
        var bestTicket: SchedulerTicket<Payload>?
        for (id, heap) in classes {
            guard let head = heap.first else { continue }
            if settings.rateLimits[id.program] != nil && nextTokenMs(id.program, nowMs: nowMs) > nowMs { continue }
            if runningByProgram[id.program, default: 0] >= programLimit(id.program) { continue }
            if runningByEndpoint[id.endpoint, default: 0] >= settings.limit(endpoint: id.endpoint) { continue }
            if let current = bestTicket {
                let better = settings.ordering == .earliestDeadlineFirst
                    ? (head.publishByMs, head.id) < (current.publishByMs, current.id)
                    : head.id < current.id
                guard better else { continue }
            }
            best = id
            bestTicket = head
        }
        return best
    }

    private mutating func nextTokenMs(_ program: String, nowMs: Int64) -> Int64 {
        var bucket = bucketFor(program, nowMs: nowMs)
        let next = bucket.nextTokenAtMs(nowMs: nowMs)
        buckets[program] = bucket
        return next
    }

    /// The program's bulkhead under this worker's share.
    private func programLimit(_ program: String) -> Int { share.concurrency(settings.limit(program: program)) }

    private mutating func drop(_ id: ClassID, as decision: SchedulerDecision<Payload>, into decisions: inout [SchedulerDecision<Payload>]) {
        let ticket = classes[id]!.popFirst()!
        queued -= 1
        decisions.append(decision)
        releaseKey(ticket.key)
    }

    private mutating func breakerFor(_ endpoint: String) -> CircuitBreaker? {
        if let breaker = breakers[endpoint] { return breaker }
        guard let breakerSettings = settings.breakers[endpoint] ?? settings.defaultBreaker else { return nil }
        let breaker = CircuitBreaker(settings: breakerSettings)
        breakers[endpoint] = breaker
        return breaker
    }

    private mutating func bucketFor(_ program: String, nowMs: Int64) -> TokenBucket {
        if let bucket = buckets[program] { return bucket }
        let limit = share.rate(settings.rateLimits[program]!)
        let bucket = TokenBucket(ratePerSecond: limit.perSecond, burst: limit.burst, nowMs: nowMs)
        buckets[program] = bucket
        return bucket
    }
}
