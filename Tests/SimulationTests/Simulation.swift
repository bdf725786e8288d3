import Kafka
import Simulator

/// One seeded run: three or more workers (`SimWorker`, the real core types) in one consumer
/// group over a simulated cluster, a stateful issuer, a workload of single-use handshakes, and
/// faults drawn from the seed — cooperative or eager rebalances, lost assignments (a zombie that
/// goes on working until it notices), kill -9, workers joining and leaving, produce errors that
/// may or may not have written, slow acknowledgements, a markers partition that cannot be read,
/// issuer calls longer than the drain. Afterwards (and as it happens) the promises are checked:
/// at most one issuer call per handshake; every request final by its deadline plus the
/// reconciliation time; no two different finals; committed offsets never backwards; no record
/// handled before its assignment's catch-up.
final class Simulation {
    /// What a run found.
    struct Report {
        let seed: UInt64
        let settings: SimWorld.Settings
        let violations: [String]
        let trace: [String]
        let events: Int
        let requests: Int
        let calls: Int
        let identicalDuplicates: Int
        let refused: Int
    }

    /// How long after its deadline a request's final may come (the reconciliation tiers).
    static let reconcileAllowanceMs: Int64 = 40_000
    static let endMs: Int64 = 150_000

    let seed: UInt64
    let world: SimWorld
    private var workers: [String: SimWorker] = [:]
    private var order: [String] = []
    private var started = 0
    /// The group's assignment: partition → worker.
    private var owner: [Int32: String] = [:]
    private var rebalancing = false
    private var rebalanceAgain = false

    init(seed: UInt64, tracing: Bool = false) {
        self.seed = seed
        var random = SimulatorRandom(seed: seed ^ 0x5151_5151)
        var settings = SimWorld.Settings()
        settings.workers = Int(random.int(2...4))
        settings.partitions = Int32(random.int(2...6))
        settings.requests = Int(random.int(20...80))
        settings.eager = random.chance(0.35)
        settings.drainMs = random.chance(0.4) ? 5_000 : 10_200
        settings.produceFaultRate = random.pick([0, 0, 0.02, 0.08])
        settings.kills = Int(random.int(0...2))
        settings.losses = Int(random.int(0...2))
        settings.joins = Int(random.int(0...1))
        settings.leaves = Int(random.int(0...1))
        settings.hiccups = Int(random.int(0...2))
        settings.unreadable = Int(random.int(0...2))
        world = SimWorld(settings: settings, seed: seed, tracing: tracing)
    }

    /// Runs the schedule to its end and checks it.
    func run() -> Report {
        let settings = world.settings
        world.note("seed \(seed): \(settings)")
        world.reconcileSink = { [unowned self] job, due in deliverReconcile(job, dueInMs: due) }
        for _ in 0..<settings.workers { join() }
        for index in 0..<settings.requests {
            let at = world.random.int(0...15_000)
            let partition = Int32(world.random.int(0...Int64(settings.partitions - 1)))
            world.events.after(at) { [unowned self] in
                let request = SimRequest(id: "r\(index)", deadlineMs: world.nowMs + 20_000)
                world.cluster.requests[Int(partition)].append(request)
            }
        }
        func fault(_ count: Int, _ action: @escaping () -> Void) {
            for _ in 0..<count { world.events.after(world.random.int(500...30_000)) { action() } }
        }
        fault(settings.kills) { [unowned self] in whenSettled { self.kill() } }
        fault(settings.losses) { [unowned self] in whenSettled { self.lose() } }
        fault(settings.joins) { [unowned self] in whenSettled { self.join() } }
        fault(settings.leaves) { [unowned self] in whenSettled { self.leave() } }
        fault(settings.hiccups) { [unowned self] in world.cluster.slowUntilMs = world.nowMs + world.random.int(1_000...4_000) }
        fault(settings.unreadable) { [unowned self] in
            let partition = Int32(world.random.int(0...Int64(settings.partitions - 1)))
            world.cluster.unreadableUntilMs[partition] = world.nowMs + world.random.int(1_000...6_000)
            world.note("markers partition \(partition) unreadable for a while")
        }
        while world.events.runNext(untilMs: Self.endMs) {}
        return check()
    }

    private func check() -> Report {
        let cluster = world.cluster
        var calls = 0
        for (handshake, count) in world.issuer.calls.sorted(by: { $0.key < $1.key }) {
            calls += count
            if count > 1 { cluster.violation("handshake \(handshake) reached the issuer \(count) times", atMs: world.nowMs) }
        }
        var identical = 0
        for log in cluster.requests {
            for request in log {
                guard let finals = cluster.finals[request.id], let first = finals.first else {
                    cluster.violation("request \(request.id) has no final", atMs: world.nowMs)
                    continue
                }
                identical += finals.count - 1
                if first.atMs > request.deadlineMs + Self.reconcileAllowanceMs {
                    cluster.violation("request \(request.id) final only at \(first.atMs) (deadline \(request.deadlineMs))", atMs: world.nowMs)
                }
            }
        }
        return Report(seed: seed, settings: world.settings, violations: cluster.violations, trace: world.trace, events: world.events.ran,
                      requests: cluster.requests.reduce(0) { $0 + $1.count }, calls: calls, identicalDuplicates: identical,
                      refused: workers.values.reduce(0) { $0 + $1.refused })
    }

    // MARK: - The group

    private var live: [SimWorker] { order.compactMap { workers[$0] }.filter { $0.alive && world.members.contains($0.name) } }

    /// Runs `action` once no rebalance is under way (faults do not overlap rebalances).
    private func whenSettled(_ action: @escaping () -> Void) {
        guard rebalancing else { return action() }
        world.events.after(200) { [unowned self] in whenSettled(action) }
    }

    private func join() {
        started += 1
        let worker = SimWorker(name: "w\(started)", world: world)
        workers[worker.name] = worker
        order.append(worker.name)
        world.members.insert(worker.name)
        world.note("\(worker.name) joins")
        worker.start()
        rebalance()
    }

    private func kill() {
        let candidates = live
        guard candidates.count >= 2 else { return }
        let victim = world.random.pick(candidates)
        victim.kill()
        world.members.remove(victim.name)
        // The group notices after the session timeout.
        world.events.after(SimWorld.sessionTimeoutMs) { [unowned self] in rebalance() }
        if world.random.chance(0.6) { world.events.after(world.random.int(1_000...4_000)) { [unowned self] in whenSettled { self.join() } } }
    }

    /// A session timeout: the group expels a worker whose poll thread was held up; it works on as
    /// a zombie until it notices, then rejoins.
    private func lose() {
        let candidates = live
        guard candidates.count >= 2 else { return }
        let zombie = world.random.pick(candidates)
        world.members.remove(zombie.name)
        world.note("\(zombie.name) expelled by the group (session timeout); it does not know yet")
        rebalance()
        world.events.after(world.random.int(0...4_000)) { [unowned self] in
            guard zombie.alive else { return }
            zombie.lost(zombie.held)
            whenSettled { [unowned self] in
                guard zombie.alive else { return }
                world.members.insert(zombie.name)
                world.note("\(zombie.name) rejoins")
                rebalance()
            }
        }
    }

    /// SIGTERM: the worker drains and commits its partitions, then leaves the group.
    private func leave() {
        let candidates = live
        guard candidates.count >= 2 else { return }
        let leaving = world.random.pick(candidates)
        rebalancing = true
        leaving.revoke(leaving.held) { [unowned self] in
            world.members.remove(leaving.name)
            leaving.kill()
            for (partition, name) in owner where name == leaving.name { owner[partition] = nil }
            rebalancing = false
            rebalance()
        }
    }

    /// A rebalance to round-robin over the live members: cooperative moves only the partitions
    /// that change owner (revoked, drained, then assigned); eager revokes every partition first.
    private func rebalance() {
        guard !rebalancing else { rebalanceAgain = true; return }
        let members = live
        guard !members.isEmpty else { return }
        rebalancing = true
        for (partition, name) in owner where !(workers[name].map { $0.alive && world.members.contains(name) } ?? false) {
            owner[partition] = nil
        }
        var target: [Int32: String] = [:]
        for partition in 0..<world.settings.partitions { target[partition] = members[Int(partition) % members.count].name }
        let moving = (0..<world.settings.partitions).filter { world.settings.eager || owner[$0] != target[$0] }
        var revokes: [String: [Int32]] = [:]
        for partition in moving { if let name = owner[partition] { revokes[name, default: []].append(partition) } }
        var waiting = revokes.count
        let assign = { [unowned self] in
            for partition in moving { owner[partition] = target[partition] }
            var grants: [String: [Int32]] = [:]
            for partition in moving { grants[target[partition]!, default: []].append(partition) }
            for name in grants.keys.sorted() { workers[name]?.assigned(grants[name]!) }
            rebalancing = false
            if rebalanceAgain {
                rebalanceAgain = false
                rebalance()
            }
        }
        guard waiting > 0 else { return assign() }
        world.note("rebalance (\(world.settings.eager ? "eager" : "cooperative")): revoking \(revokes.sorted { $0.key < $1.key })")
        for name in revokes.keys.sorted() {
            for partition in revokes[name]! { owner[partition] = nil }
            workers[name]!.revoke(revokes[name]!) {
                waiting -= 1
                if waiting == 0 { assign() }
            }
        }
    }

    // MARK: - The reconcile topic

    /// A job runs on some live worker when due; one that does not finish (its worker died, or
    /// it asked to) is delivered again, and now and then a job is delivered twice (at least once).
    private func deliverReconcile(_ job: SimReconcileJob, dueInMs: Int64) {
        world.events.after(dueInMs) { [unowned self] in
            let runners = live
            guard !runners.isEmpty else { return deliverReconcile(job, dueInMs: 1_000) }
            var finished = false
            let copies = world.random.chance(0.1) && runners.count > 1 ? 2 : 1
            for copy in 0..<copies {
                let runner = runners[(Int(world.random.next() % UInt64(runners.count)) + copy) % runners.count]
                world.note("\(runner.name) reconciles \(job.requestID)")
                runner.reconcile(job) { [unowned self] ok in
                    guard !finished else { return }
                    if ok { finished = true } else { finished = true; deliverReconcile(job, dueInMs: world.random.int(1_000...3_000)) }
                }
            }
            world.events.after(15_000) { [unowned self] in
                if !finished {
                    finished = true
                    deliverReconcile(job, dueInMs: 0)
                }
            }
        }
    }
}
