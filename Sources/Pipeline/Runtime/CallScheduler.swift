import Dispatch
import Kafka
import Observability
import Synchronization

/// Drives the `WorkScheduler` state machine: one lock around it, one timer for the next moment
/// something must expire or become possible, and the decisions carried out outside the lock.
final class CallScheduler: Sendable {
    private let state: Mutex<WorkScheduler<ProvisioningJob>>
    private let nextID = Atomic<UInt64>(0)
    private let timer: TimerBox
    private let clock: @Sendable () -> Int64
    private let carryOut: @Sendable ([SchedulerDecision<ProvisioningJob>]) -> Void
    private let breakerChanged: @Sendable (String, CircuitBreaker.State) -> Void

    /// `carryOut` receives decisions to act on (on the caller's thread: hop to a queue if slow).
    init(settings: SchedulerSettings, clock: @escaping @Sendable () -> Int64,
         carryOut: @escaping @Sendable ([SchedulerDecision<ProvisioningJob>]) -> Void,
         breakerChanged: @escaping @Sendable (String, CircuitBreaker.State) -> Void) {
        state = Mutex(WorkScheduler(settings: settings))
        self.clock = clock
        self.carryOut = carryOut
        self.breakerChanged = breakerChanged
        timer = TimerBox()
        timer.setHandler { [weak self] in self?.wake() }
    }

    /// Queues a job for its issuer call.
    func submit(_ job: ProvisioningJob, minimumBudgetMs: Int64) {
        let ticket = SchedulerTicket(id: nextID.add(1, ordering: .relaxed).newValue, key: job.orderingKey,
                                     program: job.request.program, endpoint: job.program.endpoint,
                                     publishByMs: job.window.publishByMs, minimumBudgetMs: minimumBudgetMs, payload: job)
        let now = clock()
        apply(state.withLock { $0.enqueue(ticket, nowMs: now) })
    }

    /// A started call ended (`success` feeds the breaker; nil: no call was made after all).
    func finish(ticketID: UInt64, success: Bool?) {
        let now = clock()
        apply(state.withLock { $0.finish(ticketID: ticketID, success: success, nowMs: now) })
    }

    /// Takes back queued jobs of revoked partitions (they were never started).
    func removeWaiting(partitions: Set<TopicPartition>) -> [ProvisioningJob] {
        let removed = state.withLock { $0.removeWaiting { partitions.contains($0.payload.origin.partition) } }
        rearm()
        return removed.map(\.payload)
    }

    /// Counts for metrics and health.
    var counts: (queued: Int, running: Int) {
        state.withLock { ($0.queuedCount, $0.runningCount) }
    }

    /// Occupancy, breaker states and tokens, for metrics.
    func isolationSnapshot() -> (perProgram: [String: Int], perEndpoint: [String: Int], breakers: [String: CircuitBreaker.State], tokens: [String: Double]) {
        let now = clock()
        return state.withLock { scheduler in
            (scheduler.runningPerProgram, scheduler.runningPerEndpoint, scheduler.breakerStates, scheduler.tokensAvailable(nowMs: now))
        }
    }

    private func wake() {
        let now = clock()
        apply(state.withLock { $0.dispatch(nowMs: now) })
    }

    private func apply(_ decisions: [SchedulerDecision<ProvisioningJob>]) {
        let changes = state.withLock { $0.takeBreakerChanges() }
        for change in changes { breakerChanged(change.endpoint, change.state) }
        if !decisions.isEmpty { carryOut(decisions) }
        rearm()
    }

    private func rearm() {
        let now = clock()
        let wake = state.withLock { $0.nextWakeMs(nowMs: now) }
        timer.schedule(atMs: wake, nowMs: now)
    }

    /// Cancels the timer.
    func stop() { timer.cancel() }
}

/// One reusable Dispatch timer; `DispatchSourceTimer` is thread-safe but not marked `Sendable`.
private final class TimerBox: @unchecked Sendable {
    private let queue = DispatchQueue(label: "provisioner.scheduler-timer")
    private let source: DispatchSourceTimer
    private let armedAt = Mutex<Int64?>(nil)

    init() {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .distantFuture)
        source.activate()
    }

    func setHandler(_ handler: @escaping @Sendable () -> Void) {
        source.setEventHandler { [weak self] in
            self?.armedAt.withLock { $0 = nil }
            handler()
        }
    }

    /// Arms the timer for `atMs` (wall clock), unless it is already armed at or before that time.
    func schedule(atMs: Int64?, nowMs: Int64) {
        guard let atMs else { return }
        let shouldArm = armedAt.withLock { armed -> Bool in
            if let armed, armed <= atMs, armed >= nowMs { return false }
            armed = atMs
            return true
        }
        guard shouldArm else { return }
        source.schedule(deadline: .now() + .milliseconds(Int(max(0, atMs - nowMs))), leeway: .milliseconds(1))
    }

    func cancel() { source.cancel() }
}
