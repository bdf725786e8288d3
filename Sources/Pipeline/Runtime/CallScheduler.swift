import Kafka
import Observability
import Synchronization

/// Drives the `WorkScheduler` state machine: one lock around it, one timer for the next moment
/// something must expire or become possible, and the decisions carried out outside the lock.
final class CallScheduler: Sendable {
    private let state: Mutex<WorkScheduler<ProvisioningJob>>
    private let nextID = Atomic<UInt64>(0)
    private let timer: any WorkTimer
    private let clock: @Sendable () -> Int64
    private let carryOut: @Sendable ([SchedulerDecision<ProvisioningJob>]) -> Void
    private let breakerChanged: @Sendable (String, CircuitBreaker.State) -> Void

    /// `carryOut` receives decisions to act on (on the caller's thread: hop to a queue if slow);
    /// `timer` wakes it for the next moment something must expire or become possible.
    init(settings: SchedulerSettings, clock: @escaping @Sendable () -> Int64, timer: any WorkTimer,
         carryOut: @escaping @Sendable ([SchedulerDecision<ProvisioningJob>]) -> Void,
         breakerChanged: @escaping @Sendable (String, CircuitBreaker.State) -> Void) {
        state = Mutex(WorkScheduler(settings: settings))
        self.clock = clock
        self.carryOut = carryOut
        self.breakerChanged = breakerChanged
        self.timer = timer
        timer.setHandler { [weak self] in self?.wake() }
    }

    /// Queues a job for its issuer call.
    func submit(_ job: ProvisioningJob, minimumBudgetMs: Int64) {
        let ticket = SchedulerTicket(id: nextID.add(1, ordering: .relaxed).newValue, key: job.orderingKey,
                                     program: job.request.program, endpoint: job.program.endpoint,
                                     publishByMs: job.window.publishByMs, minimumBudgetMs: minimumBudgetMs, payload: job)
        let now = clock()
        apply(now: now) { $0.enqueue(ticket, nowMs: now) }
    }

    /// A started call ended (`success` feeds the breaker; nil: no call was made after all).
    func finish(ticketID: UInt64, success: Bool?) {
        let now = clock()
        apply(now: now) { $0.finish(ticketID: ticketID, success: success, nowMs: now) }
    }

    /// Takes back queued jobs of revoked partitions (they were never started).
    func removeWaiting(partitions: Set<TopicPartition>) -> [ProvisioningJob] {
        let now = clock()
        var removed: [SchedulerTicket<ProvisioningJob>] = []
        apply(now: now) { scheduler in
            removed = scheduler.removeWaiting { partitions.contains($0.payload.origin.partition) }
            return []
        }
        return removed.map(\.payload)
    }

    /// Takes this worker's new share of the group-wide program limits (after a rebalance).
    func setShare(_ share: LimitShare) {
        let now = clock()
        apply(now: now) { $0.setShare(share, nowMs: now) }
    }

    /// The current share and, per limited program, this worker's rate and bulkhead under it (metrics).
    func shareSnapshot() -> (share: LimitShare, programs: [String: (perSecond: Double?, maxInFlight: Int?)]) {
        state.withLock { ($0.share, $0.programShares) }
    }

    /// Counts for metrics and health.
    var counts: (queued: Int, running: Int) {
        state.withLock { ($0.queuedCount, $0.runningCount) }
    }

    /// The most calls in flight (in all, per program) and tickets waiting at once since the start (metrics).
    var peaks: SchedulerPeaks { state.withLock { $0.peaks } }

    /// Occupancy, breaker states and tokens, for metrics.
    func isolationSnapshot() -> (perProgram: [String: Int], perEndpoint: [String: Int], breakers: [String: CircuitBreaker.State], tokens: [String: Double]) {
        let now = clock()
        return state.withLock { scheduler in
            (scheduler.runningPerProgram, scheduler.runningPerEndpoint, scheduler.breakerStates, scheduler.tokensAvailable(nowMs: now))
        }
    }

    private func wake() {
        let now = clock()
        apply(now: now) { $0.dispatch(nowMs: now) }
    }

    /// Runs `change` under the lock once, collecting its decisions, the breaker changes and the
    /// next wake-up; carries them out after the lock is released.
    private func apply(now: Int64, _ change: (inout WorkScheduler<ProvisioningJob>) -> [SchedulerDecision<ProvisioningJob>]) {
        let (decisions, changes, wake) = state.withLock { scheduler in
            let decisions = change(&scheduler)
            return (decisions, scheduler.takeBreakerChanges(), scheduler.nextWakeMs(nowMs: now))
        }
        for change in changes { breakerChanged(change.endpoint, change.state) }
        if !decisions.isEmpty { carryOut(decisions) }
        timer.schedule(atMs: wake, nowMs: now)
    }

    /// Cancels the timer.
    func stop() { timer.cancel() }
}
