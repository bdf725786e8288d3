import Contract
import Pipeline

/// One seeded schedule: three or four real workers (`SimNode`) in one consumer group over a
/// `SimCluster`, the `SimIssuer`, backends producing requests on recurring cards of three issuers
/// and payments (`SimBackends`), and an operator replaying dead letters (`SimOperator`). Faults are
/// drawn from the seed (`SimulationSettings`): rebalances, joins and leaves, kill -9 (restarted
/// later), zombies, produce errors that may or may not have written, slow or missing commit
/// answers, unreadable markers, issuer calls longer than the drain, answers lost after the issuer
/// applied, failing seeks, skewed clocks, a group rename, operator replays. Then the run is judged
/// (`SimulationPromises`, and the probe's: commits never backwards, no intake before catch-up).
final class SimulationRun: @unchecked Sendable {
    /// Virtual time starts here (2027-01-15): timestamps read like real ones.
    static let epochMs: Int64 = 1_800_000_000_000
    static let topics = TopicNames()
    /// The backends' reply topic (two partitions), and a name under the allowed prefix that the
    /// cluster does not have.
    static let replyTopic = "sim.replies", missingReplyTopic = "sim.reply.gone"
    /// How long after its deadline a request's final may come (reconciliation tiers and hand-overs).
    static let reconcileAllowanceMs: Int64 = 45_000
    /// When the last request is sent, and when the run ends.
    static let sendWindowMs: Int64 = 20_000
    static let endMs: Int64 = 100_000
    /// How long nothing may move before a run whose requests are all answered ends early.
    static let quietMs: Int64 = 25_000
    static let windowMs: Int64 = 20_000
    /// The workers' `deadlines.publish_reserve_ms` (the default).
    static let publishReserveMs = WorkerConfiguration(workerID: "sim").publishReserveMs

    let seed: UInt64
    let settings: SimulationSettings
    let world: SimWorld
    let cluster: SimCluster
    let issuer: SimIssuer
    let probe = SimProbe()
    private var nodes: [SimNode] = []
    private var started = 0
    /// The consumer group new workers join (renamed once when `SimulationSettings.rename`).
    private var group = "sim"
    /// While a rename waits for the old group's workers to exit: no worker starts (a restart or a
    /// join waits), so the two groups never run at once.
    private var renamingAfter: [SimNode]?
    /// A pinned scenario's steps in place of the seed's workload and faults (`SimulationScenario`).
    private let script: SimulationScenario.Script?
    /// Whether produce acknowledgements stay slow until the renamed group starts.
    private var slowUntilRenamed = false
    /// Faults the schedule carried out, by name (`SimulationCoverage`).
    private var carriedOut: [String: Int] = [:]
    /// The backends producing requests and payments, and the operator replaying dead letters.
    let backends: SimBackends
    let operatorDesk: SimOperator

    init(seed: UInt64, mutations: CoreMutations, tracing: Bool, script: SimulationScenario.Script? = nil) {
        self.seed = seed
        self.script = script
        settings = script.map { SimulationSettings(workers: $0.workers, partitions: $0.partitions, mutations: mutations) }
            ?? SimulationSettings(seed: seed, mutations: mutations)
        world = SimWorld(seed: seed, startMs: Self.epochMs, tracing: tracing)
        let topics = Self.topics
        cluster = SimCluster(world: world, partitions: [topics.requests: settings.partitions, topics.markers: settings.partitions,
                                                        topics.results: 1, topics.audit: 1, topics.reconcile: 2, topics.deadLetters: 1,
                                                        topics.parked: 1, Self.replyTopic: 2],
                             cooperative: settings.cooperative, rebalanceTimeoutMs: settings.rebalanceTimeoutMs,
                             sessionTimeoutMs: settings.sessionTimeoutMs, firstOffset: settings.firstOffset)
        issuer = SimIssuer(world: world)
        backends = SimBackends(world: world, cluster: cluster, issuer: issuer, settings: settings)
        operatorDesk = SimOperator(world: world, cluster: cluster)
        // A scenario draws no fault: a write a dead process sent still lands.
        if script != nil { cluster.deadWritesLand = true }
        probe.world = world
        probe.cluster = cluster
        probe.wake = { [unowned self] worker in nodes.first { $0.process.name == worker }?.executor.wakeLoops() }
    }

    /// Runs the schedule (or the scenario) to its end and checks it.
    func run() -> SimulationReport {
        world.note("seed \(seed): \(settings)")
        if let script {
            for _ in 0..<settings.workers { startWorker() }
            perform(script)
        } else {
            workload()
        }
        // Until nothing has moved for `quietMs` after every request is answered (or the end).
        var checkAtMs = Self.epochMs + Self.sendWindowMs + Self.windowMs
        while world.runNext(untilMs: Self.epochMs + Self.endMs) {
            guard world.nowMs >= checkAtMs else { continue }
            checkAtMs = world.nowMs + 1_000
            if world.nowMs - cluster.lastProgressMs >= Self.quietMs && allAnswered() { break }
        }
        let report = check()
        tearDown()
        return report
    }

    /// The seed's workload and faults: cards of three issuers, requests on them, payments.
    private func workload() {
        if settings.firstOffset > 0 { carriedOut["retention", default: 0] += 1 }
        let cards = backends.cards()
        for _ in 0..<settings.workers { startWorker() }
        backends.requests(on: cards)
        backends.payments()
        faults()
    }

    /// A scenario's steps, each at its time.
    private func perform(_ script: SimulationScenario.Script) {
        for (atMs, step) in script.steps {
            world.at(Self.epochMs + atMs, nil, "scenario step") { [self] in
                switch step {
                case .request(let id, let card):
                    backends.scenarioRequest(id: id, card: card)
                case .join:
                    startWorker()
                case .leave(let name):
                    guard let node = live.first(where: { $0.process.name == name }) else { return cluster.violation("scenario: no live \(name) to stop") }
                    world.note("SIGTERM \(name)")
                    node.leave(world: world)
                case .slowUntilRenamed(let takingMs):
                    slowThroughRename(fastestMs: takingMs, slowestMs: takingMs)
                case .rename:
                    rename()
                case .markersOutage(let forMs, let writesLand, let reportAfterMs):
                    cluster.failWrites(to: Self.topics.markers, forMs: forMs, landing: writesLand, reportedAfterMs: reportAfterMs)
                case .requestAgain(let id): backends.produceAgain(id)
                case .stallPool(let name, let forMs):
                    guard let node = live.first(where: { $0.process.name == name }) else { return cluster.violation("scenario: no live \(name) to stall") }
                    node.executor.stallPool(untilMs: world.nowMs + forMs)
                }
            }
        }
    }

    /// Lets everything of the run go: events, workers, groups, logs.
    private func tearDown() {
        world.clear()
        for node in nodes { node.tearDown() }
        nodes.removeAll()
        cluster.tearDown()
        probe.wake = nil
    }

    // MARK: - Workers and faults

    private var live: [SimNode] { nodes.filter { $0.process.isAlive && !$0.isLeaving } }

    private func startWorker() {
        if renamingAfter != nil {
            world.after(500, nil, "start waits for the rename") { [self] in startWorker() }
            return
        }
        started += 1
        do {
            let node = try SimNode(name: "w\(started)", world: world, cluster: cluster, issuer: issuer, settings: settings, group: group,
                                   probe: probe)
            if abs(node.clockOffsetMs) > Self.publishReserveMs { carriedOut["skew", default: 0] += 1 }
            if node.clockOffsetMs != 0 { world.note("\(node.process.name)'s clock is off by \(node.clockOffsetMs) ms") }
            nodes.append(node)
        } catch {
            cluster.violation("worker w\(started) could not start: \(error)")
        }
    }

    private func faults() {
        func schedule(_ count: Int, _ label: StaticString, _ action: @escaping () -> Void) {
            for _ in 0..<count { world.after(world.int(500...40_000), nil, label, action) }
        }
        schedule(settings.kills, "fault: kill -9") { [self] in
            guard live.count > 1 || true, let victim = live.isEmpty ? nil : world.pick(live) else { return }
            world.note("kill -9 \(victim.process.name)")
            carriedOut["kill", default: 0] += 1
            victim.kill()
            world.after(world.int(1_000...6_000), nil, "restart") { [self] in startWorker() }
        }
        schedule(settings.losses, "fault: member evicted") { [self] in
            guard !live.isEmpty else { return }
            let victim = world.pick(live)
            for consumer in victim.consumers where world.chance(0.7) {
                consumer.evictFromGroup(noticeAfterMs: world.int(200...6_000))
                carriedOut["eviction", default: 0] += 1
            }
            // An eviction for a network fault: the zombie may not reach the markers either, so
            // its fencing reads fail while the new owner's succeed.
            if world.chance(0.4) {
                cluster.cutOffUntilMs[victim.process.name] = world.nowMs + world.int(1_000...8_000)
                carriedOut["cut_off", default: 0] += 1
            }
        }
        schedule(settings.joins, "fault: a worker joins") { [self] in startWorker() }
        schedule(settings.leaves, "fault: a worker leaves") { [self] in
            guard live.count > 1 else { return }
            let leaving = world.pick(live)
            world.note("SIGTERM \(leaving.process.name)")
            carriedOut["leave", default: 0] += 1
            leaving.leave(world: world)
        }
        schedule(settings.hiccups, "fault: slow acknowledgements") { [self] in cluster.slowUntilMs = world.nowMs + world.int(1_000...4_000) }
        schedule(settings.unreadable, "fault: markers unreadable") { [self] in
            let partition = Int32(world.int(0...Int64(settings.partitions - 1)))
            cluster.unreadableUntilMs[partition] = world.nowMs + world.int(1_000...6_000)
            carriedOut["unreadable", default: 0] += 1
        }
        schedule(settings.rename ? 1 : 0, "fault: group renamed") { [self] in
            guard !live.isEmpty else { return }
            if world.chance(0.5) {
                // A broker slow through the rename: the old group's last writes (the fences of the
                // partitions its leaving members hand each other) land up to 8 s late, some after
                // the new group's first fences.
                slowThroughRename(fastestMs: 200, slowestMs: 8_000)
                carriedOut["rename_slow", default: 0] += 1
            }
            rename()
        }
        // Some replays come while the original's copies are still in flight, some after.
        for _ in 0..<settings.replays { world.after(world.int(15_000...70_000), nil, "operator replays dead letters") { [self] in operatorDesk.replay() } }
        if settings.promptReplays { operatorDesk.watch() }
        schedule(settings.copies, "fault: a signed request copied to another partition") { [self] in
            guard settings.partitions > 1, !backends.signedSent.isEmpty else { return }
            var copy = world.pick(backends.signedSent)
            let original = copy.partition ?? 0
            copy.partition = (original + Int32(world.int(1...Int64(settings.partitions - 1)))) % settings.partitions
            let offset = cluster.append(copy, partition: copy.partition ?? 0)
            carriedOut["copy", default: 0] += 1
            world.note("a signed request of partition \(original) copied to \(copy.partition ?? 0)@\(offset)")
        }
        schedule(settings.outages, "fault: produce outage") { [self] in
            let topic = world.pick([Self.topics.results, Self.topics.markers])
            cluster.produceOutageUntilMs[topic] = world.nowMs + world.int(2_000...15_000)
            carriedOut["outage", default: 0] += 1
        }
        schedule(settings.queryOutages, "fault: state queries unavailable") { [self] in
            issuer.queryOutageUntilMs = max(issuer.queryOutageUntilMs, world.nowMs + world.int(5_000...25_000))
            carriedOut["query_outage", default: 0] += 1
        }
    }

    /// The documented rename: every worker of the old group stops (SIGTERM, drained) before the
    /// first of the new group starts.
    private func rename() {
        let running = nodes.filter(\.process.isAlive)
        let count = live.count
        world.note("group renamed: \(count) workers stop, then start in sim-renamed")
        carriedOut["rename", default: 0] += 1
        for node in live { node.leave(world: world) }
        renamingAfter = running
        startRenamed(count: count, after: running)
    }

    /// Produce acknowledgements take `fastestMs`-`slowestMs` until the renamed group starts (the
    /// broker recovers then).
    private func slowThroughRename(fastestMs: Int64, slowestMs: Int64) {
        cluster.slowUntilMs = world.nowMs + 60_000
        cluster.slowFastestMs = fastestMs
        cluster.slowestMs = slowestMs
        slowUntilRenamed = true
    }

    /// Starts `count` workers in the renamed group once every one of `after` has exited (kill -9
    /// of those still running after 30 s, as an orchestrator's grace period ends).
    private func startRenamed(count: Int, after old: [SimNode], waitedMs: Int64 = 0) {
        world.after(500, nil, "renamed group waits") { [self] in
            let running = old.filter(\.process.isAlive)
            if !running.isEmpty && waitedMs < 30_000 { return startRenamed(count: count, after: old, waitedMs: waitedMs + 500) }
            for node in running { node.kill() }
            group = "sim-renamed"
            renamingAfter = nil
            if slowUntilRenamed {
                slowUntilRenamed = false
                cluster.slowUntilMs = world.nowMs
                cluster.slowFastestMs = 200
                cluster.slowestMs = 3_000
            }
            for _ in 0..<count { startWorker() }
        }
    }

    // MARK: - Checks

    /// Whether every request sent has a final result or a dead letter.
    private func allAnswered() -> Bool {
        backends.sent.allSatisfy { cluster.answered.contains($0.requestID) }
    }

    private func check() -> SimulationReport {
        let verdict = SimulationPromises.judge(sent: backends.sent, cluster: cluster, issuer: issuer)
        carriedOut.merge(verdict.paths, uniquingKeysWith: +)
        return SimulationReport(seed: seed, settings: settings.description, violations: cluster.violations + probe.violations,
                                trace: world.trace, events: world.ran, requests: verdict.requests, calls: verdict.calls, finals: verdict.finals,
                                identicalDuplicates: verdict.identical, deadLetters: verdict.deadLetters, coverage: coverage())
    }

    /// The paths this run took: the workers' counters (every process, killed ones included), what
    /// the schedule carried out and what judging it saw.
    private func coverage() -> SimulationCoverage {
        var schedule = carriedOut
        schedule["replay", default: 0] += operatorDesk.replayed
        return SimulationCoverage(registries: nodes.map(\.metrics), schedule: schedule)
    }
}
