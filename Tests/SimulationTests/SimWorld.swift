import Simulator

/// What every simulated part shares: simulated time and events, the seeded chance, the cluster,
/// the issuer, the group's membership, the run's settings and the event trace printed on failure.
final class SimWorld {
    /// One run's settings, drawn from the seed (`Simulation.settings`).
    struct Settings: CustomStringConvertible {
        var workers = 3
        var partitions: Int32 = 4
        var requests = 60
        var eager = false
        /// The rebalance drain (`revoke_drain_ms`): 10,200 by default (longest timeout plus the
        /// publish reserve); 5,000 in some runs, so calls outlive it.
        var drainMs: Int64 = 10_200
        /// Chance that a produce reports an error (the record is then written or not, half each).
        var produceFaultRate = 0.0
        var kills = 0
        var losses = 0
        var joins = 0
        var leaves = 0
        var hiccups = 0
        var unreadable = 0

        var description: String {
            "workers=\(workers) partitions=\(partitions) requests=\(requests) \(eager ? "eager" : "cooperative") drain=\(drainMs)ms "
                + "produce_faults=\(produceFaultRate) kills=\(kills) losses=\(losses) joins=\(joins) leaves=\(leaves) "
                + "hiccups=\(hiccups) unreadable=\(unreadable)"
        }
    }

    static let publishReserveMs: Int64 = 200
    static let issuerTimeoutMs: Int64 = 10_000
    static let sessionTimeoutMs: Int64 = 6_000

    let settings: Settings
    let events = SimEvents()
    var random: SimulatorRandom
    let cluster: SimCluster
    let issuer = SimIssuer()
    /// Live group members by name (a killed or expelled worker is not one).
    var members: Set<String> = []
    private(set) var trace: [String] = []
    let tracing: Bool

    init(settings: Settings, seed: UInt64, tracing: Bool) {
        self.settings = settings
        random = SimulatorRandom(seed: seed)
        cluster = SimCluster(partitionCount: settings.partitions)
        self.tracing = tracing
    }

    var nowMs: Int64 { events.nowMs }

    /// Notes an event in the trace (kept whole: a failure prints it).
    func note(_ text: @autoclosure () -> String) {
        trace.append("t=\(nowMs) \(text())")
        if tracing { print("t=\(nowMs) \(text())") }
    }

    /// Where reconciliation jobs go (the reconcile topic's consumers: `Simulation`).
    var reconcileSink: ((SimReconcileJob, Int64) -> Void)?

    /// A reconciliation job published, to run `dueInMs` from now.
    func enqueueReconcile(_ job: SimReconcileJob, dueInMs: Int64) { reconcileSink?(job, dueInMs) }

    /// What a produce ending now did: written to the log, and acknowledged to its producer. It
    /// errors with `produceFaultRate` (then written or not, half each); a dead producer hears nothing.
    func produceOutcome(producerAlive: Bool) -> (written: Bool, acknowledged: Bool) {
        let fails = !producerAlive || random.chance(settings.produceFaultRate)
        return (!fails || random.chance(0.5), !fails)
    }

    /// How long a produce takes to be acknowledged now.
    func produceDelayMs() -> Int64 {
        var delay = random.int(1...15)
        if nowMs < cluster.slowUntilMs { delay += random.int(300...3_000) }
        return delay
    }
}
