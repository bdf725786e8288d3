import Contract
import Foundation
import Kafka
import Pipeline
import Recovery
import Simulator

/// One seeded schedule: three or four real workers (`SimNode`) in one consumer group over a
/// `SimCluster`, the `SimIssuer`, a workload of single-use Google Wallet handshakes on recurring
/// cards (some sent twice), and faults drawn from the seed: cooperative or eager rebalances,
/// workers joining and leaving, kill -9 (restarted later, as an orchestrator would), members the
/// coordinator evicts while they go on working (zombies), produce errors that may or may not have
/// written, slow acknowledgements, markers partitions that cannot be read, issuer calls longer
/// than the revoke drain, answers lost after the issuer applied the call, seeks that fail (refused,
/// or accepted and never carried out), a clock per worker off by up to a second. Then the promises are
/// checked (`Report.violations`): a handshake reaches the issuer at most once; every request gets a
/// final result (or a dead letter) by its deadline plus the reconciliation tiers; no request gets
/// two different finals; a group's committed offset never moves backwards; no record reaches
/// intake before its assignment's marker catch-up finished.
final class SimulationRun: @unchecked Sendable {
    /// Virtual time starts here (2027-01-15): timestamps read like real ones.
    static let epochMs: Int64 = 1_800_000_000_000
    static let topics = TopicNames()
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

    /// What a seed drew.
    struct Settings: CustomStringConvertible {
        var workers = 3
        var partitions: Int32 = 4
        var requests = 20
        var cards = 10
        var cooperative = true
        var drainMs: Int64 = 10_200
        var rebalanceTimeoutMs: Int64 = 60_000
        var sessionTimeoutMs: Int64 = 8_000
        var produceFaultRate = 0.0
        var resendRate = 0.1
        var kills = 0, losses = 0, joins = 0, leaves = 0, hiccups = 0, unreadable = 0, outages = 0
        /// The share of seeks that fail: half refused at once, half accepted and never carried out
        /// (librdkafka's asynchronous seek reports nothing).
        var seekFaultRate = 0.0
        /// The share of synchronous commits (on a revoke, at a stop) whose answer does not come
        /// within their bound, half of them stored by the coordinator all the same. Not drawn from
        /// the seed: 0 unless a run asks for it (`SimulationBatch.run`), so the seeds' schedules
        /// stay as they were.
        var commitTimeoutRate = 0.0
        /// Each worker's clock is off the world's by up to this much, either way (drawn per process).
        var skewMs: Int64 = 0
        /// The workers' `max_pending`: small enough in some seeds that backpressure pauses every partition.
        var maxPending = 4_096
        /// Every partition's first offset: retention deleted the records before it (the low watermark is not 0).
        var firstOffset: Int64 = 0
        /// Whether the operator renames the consumer group once: every worker stops, then as many
        /// start in a new group (which has no committed offsets, and finds the old group's fences).
        var rename = false
        /// How many times an operator replays every dead letter written so far (`dlq replay`).
        var replays = 0
        var mutations = CoreMutations()

        var description: String {
            "workers=\(workers) partitions=\(partitions) requests=\(requests) cards=\(cards) \(cooperative ? "cooperative" : "eager") "
                + "drain=\(drainMs) rebalance_timeout=\(rebalanceTimeoutMs) session_timeout=\(sessionTimeoutMs) produce_faults=\(produceFaultRate) resend=\(resendRate) "
                + "kills=\(kills) losses=\(losses) joins=\(joins) leaves=\(leaves) hiccups=\(hiccups) unreadable=\(unreadable) outages=\(outages) "
                + "seek_faults=\(seekFaultRate) skew=\(skewMs) max_pending=\(maxPending) first_offset=\(firstOffset) rename=\(rename) replays=\(replays)"
                + (commitTimeoutRate > 0 ? " commit_timeouts=\(commitTimeoutRate)" : "")
        }

        /// The settings seed `seed` draws (from its own stream, so they do not shift the schedule's draws).
        init(seed: UInt64, mutations: CoreMutations) {
            let world = SimWorld(seed: seed ^ 0x5eed_5eed_5eed_5eed, startMs: 0, tracing: false)
            workers = Int(world.int(3...4))
            partitions = Int32(world.int(2...6))
            requests = Int(world.int(10...40))
            cards = max(3, requests / Int(world.int(1...3)))
            cooperative = world.chance(0.65)
            drainMs = world.pick([3_000, 5_000, 10_200])
            rebalanceTimeoutMs = world.pick([6_000, 15_000, 60_000])
            sessionTimeoutMs = world.pick([6_000, 10_000])
            produceFaultRate = world.pick([0, 0, 0.02, 0.08, 0.2])
            resendRate = world.pick([0.1, 0.1, 0.3])
            kills = Int(world.int(0...2))
            losses = Int(world.int(0...2))
            joins = Int(world.int(0...1))
            leaves = Int(world.int(0...1))
            hiccups = Int(world.int(0...2))
            unreadable = Int(world.int(0...2))
            outages = world.pick([0, 0, 1])
            seekFaultRate = world.pick([0, 0, 0.1, 0.3])
            skewMs = world.pick([0, 0, 150, 1_000])
            maxPending = world.pick([4_096, 4_096, 6, 2])
            firstOffset = world.pick([0, 0, 1_000])
            rename = world.chance(0.2)
            replays = world.pick([0, 1, 2])
            self.mutations = mutations
        }
    }

    let seed: UInt64
    let settings: Settings
    let world: SimWorld
    let cluster: SimCluster
    let issuer: SimIssuer
    let probe = SimProbe()
    private var nodes: [SimNode] = []
    private var started = 0
    /// The consumer group new workers join (renamed once when `Settings.rename`).
    private var group = "sim"
    /// While a rename waits for the old group's workers to exit: no worker starts (a restart or a
    /// join waits), so the two groups never run at once.
    private var renamingAfter: [SimNode]?
    /// Faults the schedule carried out, by name (`SimulationCoverage`).
    private var carriedOut: [String: Int] = [:]
    private var sent: [Sent] = []

    /// A request the workload produced, and what its finals are judged by.
    struct Sent {
        var requestID: String
        var program: String
        var card: String
        var device: String
        var handshake: String
        var producedAtMs: Int64
        var deadlineMs: Int64
    }

    init(seed: UInt64, mutations: CoreMutations, tracing: Bool, commitTimeoutRate: Double = 0) {
        self.seed = seed
        var settings = Settings(seed: seed, mutations: mutations)
        settings.commitTimeoutRate = commitTimeoutRate
        self.settings = settings
        world = SimWorld(seed: seed, startMs: Self.epochMs, tracing: tracing)
        let topics = Self.topics
        cluster = SimCluster(world: world, partitions: [topics.requests: settings.partitions, topics.markers: settings.partitions,
                                                        topics.results: 1, topics.audit: 1, topics.reconcile: 2, topics.deadLetters: 1,
                                                        topics.parked: 1],
                             cooperative: settings.cooperative, rebalanceTimeoutMs: settings.rebalanceTimeoutMs,
                             sessionTimeoutMs: settings.sessionTimeoutMs, firstOffset: settings.firstOffset)
        issuer = SimIssuer(world: world)
        probe.world = world
        probe.cluster = cluster
        probe.wake = { [unowned self] worker in nodes.first { $0.process.name == worker }?.executor.wakeLoops() }
    }

    /// Runs the schedule to its end and checks it.
    func run() -> SimulationReport {
        world.note("seed \(seed): \(settings)")
        if settings.firstOffset > 0 { carriedOut["retention", default: 0] += 1 }
        let behaviours = SimIssuer.Behaviour.allCases
        var cards: [(program: String, id: String)] = []
        for index in 0..<settings.cards {
            let program = world.chance(0.7) ? "sim-imprint" : "sim-dcs"
            let card = "c\(index)"
            cards.append((program, card))
            // Most cards answer at once; the rest slowly, lose answers, or refuse.
            issuer.behaviours[card] = world.chance(0.55) ? .ok : world.pick(behaviours)
        }
        for _ in 0..<settings.workers { startWorker() }
        for index in 0..<settings.requests {
            let card = world.pick(cards)
            let device = "d\(world.int(0...2))-\(card.id)"
            let at = world.int(1_000...Self.sendWindowMs)
            let resend = world.chance(settings.resendRate) ? world.int(0...15_000) : nil
            world.after(at, nil, "request produced") { [self] in
                let request = request(id: "r\(index)", program: card.program, card: card.id, device: device, wallet: "w\(index)")
                sent.append(Sent(requestID: request.requestID, program: card.program, card: card.id, device: device,
                                 handshake: HandshakeReference.google(walletID: "w\(index)", deviceID: device, serverSessionID: nil),
                                 producedAtMs: world.nowMs, deadlineMs: world.nowMs + Self.windowMs))
                let partition = cluster.partition(for: request.message)
                let offset = cluster.append(request.message, partition: partition)
                world.note("request \(request.requestID) (\(card.program), card \(card.id): \(issuer.behaviours[card.id].map { "\($0)" } ?? "ok")) at \(partition)@\(offset)")
                if let resend { world.after(resend, nil, "request produced again") { [self] in
                    let offset = cluster.append(request.message, partition: partition)
                    world.note("request \(request.requestID) again at \(partition)@\(offset)")
                } }
            }
        }
        faults()
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
            // The documented way: every worker of the old group stops (SIGTERM, drained) before
            // the first of the new group starts.
            let running = nodes.filter(\.process.isAlive)
            guard !live.isEmpty else { return }
            world.note("group renamed: \(live.count) workers stop, then start in sim-renamed")
            carriedOut["rename", default: 0] += 1
            let count = live.count
            for node in live { node.leave(world: world) }
            renamingAfter = running
            startRenamed(count: count, after: running)
        }
        // Some replays come while the original's copies are still in flight, some after.
        for _ in 0..<settings.replays { world.after(world.int(15_000...70_000), nil, "operator replays dead letters") { [self] in replayDeadLetters() } }
        schedule(settings.outages, "fault: produce outage") { [self] in
            let topic = world.pick([Self.topics.results, Self.topics.markers])
            cluster.produceOutageUntilMs[topic] = world.nowMs + world.int(2_000...15_000)
            carriedOut["outage", default: 0] += 1
        }
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
            for _ in 0..<count { startWorker() }
        }
    }

    /// What `dlq replay` does with every dead letter written so far: a letter whose seal, target
    /// and replay policy allow it goes back to its original topic and partition, signed with the
    /// replay key (`DeadLetterReplayer.replayMessage`, the tool's own builder).
    private func replayDeadLetters() {
        let replayer = DeadLetterReplayer(properties: [:], auditTopic: Self.topics.audit, operatorName: "sim-operator",
                                          replayKeys: Self.replayKeys, targetTopics: [Self.topics.requests, Self.topics.reconcile])
        for record in cluster.records(Self.topics.deadLetters) {
            let entry = DeadLetterEntry(message: record)
            guard replayer.refusal(entry, to: nil, nowMs: world.nowMs) == nil, let provenance = entry.provenance,
                  DeadLetterReplayPolicy.replayVerdict(provenance: provenance, summary: entry.summary, nowMs: world.nowMs).isReplayable else { continue }
            let message = DeadLetterReplayer.replayMessage(entry, provenance: provenance, to: provenance.originalTopic, operatorName: "sim-operator",
                                                           signer: Self.replayKeys.signer(nowMs: world.nowMs), partitionCount: 1, nowMs: world.nowMs)
            let offset = cluster.append(message, partition: message.partition ?? cluster.partition(for: message))
            carriedOut["replay", default: 0] += 1
            world.note("operator replays \(entry.identifier) to \(provenance.originalTopic)@\(offset)")
        }
    }

    // MARK: - Workload

    /// A Google Wallet provisioning request (a fresh handshake: wallet id `wallet`), keyed by card.
    private func request(id: String, program: String, card: String, device: String, wallet: String)
        -> (requestID: String, message: KafkaOutgoingMessage) {
        let value: JSONValue = .object([
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("provision"),
            "wallet": .string("google_wallet"),
            "card": .object(["id": .string(card), "last4": .string("4242"), "user_id": .string("u-\(card)")]),
            "google": .object(["wallet_id": .string(wallet), "device_id": .string(device), "google_opc_requested": .bool(false)]),
            "started_at": .string(RFC3339.format(milliseconds: world.nowMs)),
        ])
        return (id, KafkaOutgoingMessage(topic: Self.topics.requests, key: Array(card.utf8), value: JSONWriter.encode(value),
                                         timestampMs: world.nowMs))
    }

    // MARK: - Checks

    /// Whether every request sent has a final result or a dead letter.
    private func allAnswered() -> Bool {
        sent.allSatisfy { cluster.answered.contains($0.requestID) }
    }

    private func check() -> SimulationReport {
        var calls = 0
        for (handshake, count) in issuer.calls.sorted(by: { $0.key < $1.key }) {
            calls += count
            if count > 1 { cluster.violation("handshake \(handshake) reached the issuer \(count) times") }
        }
        var finals: [String: [(result: ProvisioningResult, atMs: Int64, replay: Bool)]] = [:]
        for record in cluster.records(Self.topics.results) {
            guard let result = try? ProvisioningResult.decode(record.value), result.isFinal else { continue }
            let replay = record.headers.contains { $0.key == DeadLetterHeader.replayOf }
            finals[result.requestID, default: []].append((result, record.timestampMs ?? 0, replay))
        }
        // A dead letter holds the request it gave up on: matched by the request's identity.
        let deadLettered = Set(cluster.records(Self.topics.deadLetters).compactMap { record -> String? in
            guard let document = try? JSONParser().parse(record.value), let id = document["request_id"]?.stringValue,
                  let program = document["program"]?.stringValue else { return nil }
            return "\(program)/\(id)"
        })
        var identical = 0, finalCount = 0
        var seen = Set<String>()
        for request in sent where seen.insert(request.requestID).inserted {
            let requestID = request.requestID, deadlineMs = request.deadlineMs
            guard let answers = finals[requestID], let first = answers.first else {
                if !deadLettered.contains("\(request.program)/\(requestID)") {
                    cluster.violation("request \(requestID) has no final result and no dead letter")
                }
                continue
            }
            let facts = issuer.facts(handshake: request.handshake, card: request.card, device: request.device)
            if let untrue = FinalTruth.contradiction(first.result, facts: facts, producedAtMs: request.producedAtMs) {
                cluster.violation("request \(requestID): \(Self.describe(first.result)) is untrue: \(untrue)")
            }
            finalCount += 1
            if first.atMs > deadlineMs + Self.reconcileAllowanceMs {
                cluster.violation("request \(requestID): first final at \(first.atMs - Self.epochMs), deadline \(deadlineMs - Self.epochMs)")
            }
            for answer in answers.dropFirst() {
                if Self.sameAnswer(answer.result, first.result) {
                    identical += 1
                } else if answer.replay && first.result.status == .indeterminate && first.result.nextAction == .checkWallet {
                    // By design: an operator's replay of an exhausted reconciliation answers with
                    // the truth after the `check_wallet` final (CONTRACT, dead letters and replay).
                    if let untrue = FinalTruth.contradiction(answer.result, facts: facts, producedAtMs: request.producedAtMs) {
                        cluster.violation("request \(requestID): the replay's \(Self.describe(answer.result)) is untrue: \(untrue)")
                    }
                } else {
                    cluster.violation("request \(requestID): two different finals: \(Self.describe(first.result)) then \(Self.describe(answer.result))")
                }
            }
        }
        return SimulationReport(seed: seed, settings: settings.description, violations: cluster.violations + probe.violations,
                                trace: world.trace, events: world.ran, requests: seen.count, calls: calls, finals: finalCount,
                                identicalDuplicates: identical, deadLetters: deadLettered.count, coverage: coverage())
    }

    /// The paths this run took: the workers' counters (every process, killed ones included) and
    /// what the schedule carried out.
    private func coverage() -> SimulationCoverage {
        var series: [String: Double] = [:]
        for node in nodes { series.merge(SimulationCoverage.series(of: node.metrics), uniquingKeysWith: +) }
        var schedule = carriedOut
        schedule["applied-late"] = issuer.appliedLate
        schedule["recovered"] = cluster.records(Self.topics.markers).filter { record in
            CallMarker.decode(record.value).map { $0.state == .completed && $0.outcome == .recovered } ?? false
        }.count
        return SimulationCoverage(series: series, schedule: schedule)
    }

    /// Two finals agree when status, code, next action and whether a payload came agree.
    static func sameAnswer(_ a: ProvisioningResult, _ b: ProvisioningResult) -> Bool {
        a.status == b.status && a.code == b.code && a.nextAction == b.nextAction && (a.payload == nil) == (b.payload == nil)
    }

    static func describe(_ result: ProvisioningResult) -> String {
        "\(result.status.rawValue)/\(result.code?.rawValue ?? "-")/\(result.nextAction.rawValue)/\(result.payload == nil ? "no-payload" : "payload") (attempt \(result.attempt))"
    }

    // MARK: - Configuration

    /// The workers' secrets (environment).
    static let environment = ["PROVISIONER_AUDIT_KEY": "sim-audit-key-0123456789abcdef0123456789abcdef",
                              "SIM_IMPRINT_KEY": "imprint-key", "SIM_DCS_KEY": "dcs-key", "SIM_DCS_SECRET": "dcs-secret-0123456789",
                              "SIM_REPLAY_KEY": replaySecret]
    private static let replaySecret = "sim-replay-key-0123456789abcdef0123456789abcdef"
    /// The operator's replay keys: the workers' one replay key (`dlq.replay_signing_secret_env`).
    static let replayKeys = ReplayKeyring(keys: [ReplayKeyring.Key(id: nil, secret: Sensitive(replaySecret))])

    /// A worker's configuration: two programs (Imprint with a state query, DCS without), no
    /// payload encryption (the simulation checks decisions, not JWE), a 20 s Google window, short
    /// reconciliation tiers, and the seed's drain.
    static func configuration(workerID: String, group: String, settings: Settings) -> WorkerConfiguration {
        var configuration = WorkerConfiguration(workerID: workerID)
        configuration.kafka = ["bootstrap.servers": "simulated"]
        configuration.groupID = group
        configuration.httpListen = nil
        configuration.requireEncryption = false
        configuration.deadlines = DeadlinePolicy(googleWindowMs: windowMs)
        configuration.reconcileTiersMs = [1_000, 3_000, 6_000]
        configuration.revokeDrainMs = settings.drainMs
        configuration.maxPending = settings.maxPending
        configuration.replaySigningSecret = .environment("SIM_REPLAY_KEY")
        configuration.shutdownDrainMs = 5_000
        configuration.duplicateHorizonMs = 10 * 60 * 1_000
        var imprint = ProgramConfiguration(name: "sim-imprint", issuer: .imprint, baseURL: "http://imprint.sim", apiKey: .environment("SIM_IMPRINT_KEY"))
        imprint.timeoutMs = 10_000
        var dcs = ProgramConfiguration(name: "sim-dcs", issuer: .dcs, baseURL: "http://dcs.sim", apiKey: .environment("SIM_DCS_KEY"))
        dcs.apiSecret = .environment("SIM_DCS_SECRET")
        dcs.timeoutMs = 10_000
        configuration.programs = ["sim-imprint": imprint, "sim-dcs": dcs]
        return configuration
    }
}
