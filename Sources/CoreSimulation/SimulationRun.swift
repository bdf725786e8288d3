import Contract
import Foundation
import Issuers
import Kafka
import Pipeline
import Recovery
import Simulator

/// One seeded schedule: three or four real workers (`SimNode`) in one consumer group over a
/// `SimCluster`, the `SimIssuer`, and a workload (`SimWorkload`) on recurring cards of three
/// issuers, some requests sent twice and some signed ones copied to another partition. Faults are
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
    private var sent: [SimWorkload.Sent] = []
    /// The signed request messages produced (what a hostile copy copies).
    private var signedSent: [KafkaOutgoingMessage] = []

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
        let behaviours = SimIssuer.Behaviour.allCases
        var cards: [(program: String, id: String)] = []
        for index in 0..<settings.cards {
            let program = world.pick(["sim-imprint", "sim-imprint", "sim-dcs", "sim-gnosis"])
            let card = "c\(index)"
            cards.append((program, card))
            // Most cards answer at once; the rest slowly, lose answers, or refuse.
            issuer.behaviours[card] = world.chance(0.55) ? .ok : world.pick(behaviours)
        }
        for _ in 0..<settings.workers { startWorker() }
        for index in 0..<settings.requests {
            let card = world.pick(cards)
            let wallet: Wallet = if card.program == "sim-gnosis" || world.chance(settings.appleShare) {
                .applePay
            } else if card.program == "sim-imprint" && world.chance(settings.legacyShare) {
                .googlePay
            } else { .googleWallet }
            // A phone holds cards of several programs; a Google device here holds one card's.
            let device = switch wallet {
            case .applePay: "a\(world.int(0...2))"
            case .googleWallet: "d\(world.int(0...2))-\(card.id)"
            case .googlePay: "l\(world.int(0...1))-\(card.id)"
            }
            let at = world.int(1_000...Self.sendWindowMs)
            let resend = world.chance(settings.resendRate) ? world.int(0...15_000) : nil
            let route: ReplyRoute? = if world.chance(settings.replyShare) {
                ReplyRoute(topic: world.chance(0.1) ? Self.missingReplyTopic : Self.replyTopic, partition: world.chance(0.5) ? Int32(world.int(0...1)) : nil,
                           correlationID: Array("corr-r\(index)".utf8))
            } else { nil }
            world.after(at, nil, "request produced") { [self] in
                // Legacy Google Pay's wallet id is the device's, stable across attempts.
                let made = SimWorkload.request(id: "r\(index)", program: card.program, card: card.id, device: device, wallet: wallet,
                                               walletID: wallet == .googlePay ? "lw-\(device)" : "w\(index)", route: route, world: world)
                guard let made else { return cluster.violation("request r\(index): no Apple device could be made") }
                let request = made.request
                produce(made.message, SimWorkload.Sent(requestID: request.requestID, program: card.program, card: card.id, wallet: request.wallet,
                                                       device: ReconcileQuery.deviceRef(for: request) ?? "?", route: route,
                                                       handshake: HandshakeReference.of(request) ?? "?", producedAtMs: world.nowMs,
                                                       deadlineMs: world.nowMs + Self.windowMs),
                        behaviour: card.id, resend: resend)
            }
        }
        payments(behaviours: behaviours)
        faults()
    }

    /// A scenario's steps, each at its time.
    private func perform(_ script: SimulationScenario.Script) {
        for (atMs, step) in script.steps {
            world.at(Self.epochMs + atMs, nil, "scenario step") { [self] in
                switch step {
                case .request(let id, let card):
                    guard let made = SimWorkload.request(id: id, program: "sim-imprint", card: card, device: "d0-\(card)", wallet: .googleWallet,
                                                         walletID: "w-\(id)", route: nil, world: world) else {
                        return cluster.violation("request \(id) does not decode")
                    }
                    produce(made.message, SimWorkload.Sent(requestID: id, program: "sim-imprint", card: card, wallet: .googleWallet,
                                                           device: ReconcileQuery.deviceRef(for: made.request) ?? "?", route: nil,
                                                           handshake: HandshakeReference.of(made.request) ?? "?", producedAtMs: world.nowMs,
                                                           deadlineMs: world.nowMs + Self.windowMs),
                            behaviour: card, resend: nil)
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
                case .markersTimeOut(let forMs, let reportAfterMs):
                    cluster.produceOutageUntilMs[Self.topics.markers] = world.nowMs + forMs
                    cluster.outageWritesLand = true
                    cluster.outageReportMs = reportAfterMs
                case .stallPool(let name, let forMs):
                    guard let node = live.first(where: { $0.process.name == name }) else { return cluster.violation("scenario: no live \(name) to stall") }
                    node.executor.stallPool(untilMs: world.nowMs + forMs)
                }
            }
        }
    }

    /// Produces a request the workload made (signed for its partition when its program signs),
    /// and again `resend` ms later when drawn; `behaviour`: the card or reference whose behaviour
    /// the issuer follows (for the trace).
    private func produce(_ made: KafkaOutgoingMessage, _ request: SimWorkload.Sent, behaviour: String, resend: Int64?) {
        sent.append(request)
        let partition = cluster.partition(for: made)
        let message = SimWorkload.signed(made, program: request.program, partition: partition, settings: settings, nowMs: world.nowMs)
        if message.headers.contains(where: { $0.key == RequestSignature.header }) { signedSent.append(message) }
        let offset = cluster.append(message, partition: partition)
        let what = request.payment.map { "\($0.action?.rawValue ?? "payment") \($0.reference)" } ?? "\(request.wallet.rawValue), card \(request.card)"
        world.note("request \(request.requestID) (\(request.program) \(what): \(issuer.behaviours[behaviour].map { "\($0)" } ?? "ok")) at \(partition)@\(offset)")
        if let resend { world.after(resend, nil, "request produced again") { [self] in
            let offset = cluster.append(message, partition: partition)
            world.note("request \(request.requestID) again at \(partition)@\(offset)")
        } }
    }

    /// Worldpay payments (`SimulationSettings.payments`), each with a transaction reference of its
    /// own and a behaviour like a card's; most are followed by a settle, partial settle or cancel
    /// once their backend holds an `authorized` final (sent through the authorization's link).
    private func payments(behaviours: [SimIssuer.Behaviour]) {
        let window = WorkerConfiguration(workerID: "sim").deadlines.paymentWindowMs
        for index in 0..<settings.payments {
            let reference = "p\(index)"
            issuer.behaviours[reference] = world.chance(0.55) ? .ok : world.pick(behaviours)
            let at = world.int(1_000...Self.sendWindowMs)
            let resend = world.chance(settings.resendRate) ? world.int(0...15_000) : nil
            let route: ReplyRoute? = world.chance(settings.replyShare)
                ? ReplyRoute(topic: Self.replyTopic, partition: nil, correlationID: Array("corr-p\(index)".utf8)) : nil
            let amount = world.int(100...5_000)
            let action: PaymentActionKind? = world.chance(0.7) ? world.pick(PaymentActionKind.allCases) : nil
            let actionAfterMs = world.int(1_000...20_000)
            world.after(at, nil, "payment produced") { [self] in
                let id = "pay\(index)"
                guard let made = SimWorkload.payment(id: id, program: "sim-worldpay", reference: reference, amount: amount, route: route, world: world) else {
                    return cluster.violation("payment \(id) does not decode")
                }
                produce(made.message, SimWorkload.Sent(requestID: id, program: "sim-worldpay", card: "txn-" + reference, wallet: .applePay, device: "?",
                                                       route: route, handshake: "payment/" + reference, producedAtMs: world.nowMs,
                                                       deadlineMs: world.nowMs + window, payment: (reference, nil)),
                        behaviour: reference, resend: resend)
                guard let action else { return }
                followUp(action, paymentID: id, reference: reference, amount: action == .partialSettle ? amount / 2 : nil,
                         route: route, window: window, afterMs: actionAfterMs, looks: 0)
            }
        }
    }

    /// Sends `action` on the payment `paymentID` once its backend holds an `authorized` final
    /// (looking every `afterMs`, at most eight times; a payment not authorized is never followed up).
    private func followUp(_ action: PaymentActionKind, paymentID: String, reference: String, amount: Int64?, route: ReplyRoute?,
                          window: Int64, afterMs: Int64, looks: Int) {
        world.after(afterMs, nil, "payment action due") { [self] in
            guard let status = finalStatus(of: paymentID) else {
                if looks < 8 { followUp(action, paymentID: paymentID, reference: reference, amount: amount, route: route, window: window,
                                        afterMs: afterMs, looks: looks + 1) }
                return
            }
            guard status == .authorized else { return }
            let id = paymentID + "-" + action.rawValue
            guard let made = SimWorkload.paymentAction(id: id, program: "sim-worldpay", action: action, reference: reference, amount: amount,
                                                       route: route, world: world) else {
                return cluster.violation("payment action \(id) does not decode")
            }
            produce(made.message, SimWorkload.Sent(requestID: id, program: "sim-worldpay", card: "txn-" + reference, wallet: .applePay, device: "?",
                                                   route: route, handshake: "action/" + reference, producedAtMs: world.nowMs,
                                                   deadlineMs: world.nowMs + window, payment: (reference, action)),
                    behaviour: reference, resend: nil)
        }
    }

    /// The status of request `requestID`'s first final on any results topic, if it has one.
    private func finalStatus(of requestID: String) -> ResultStatus? {
        let key = Array(requestID.utf8)
        // Results are keyed by their request id (`ReplyRouting.messages`): only those are decoded.
        for record in cluster.records(Self.topics.results) + cluster.records(Self.replyTopic) where record.key == key {
            guard let result = try? ProvisioningResult.decode(record.value), result.requestID == requestID, result.isFinal else { continue }
            return result.status
        }
        return nil
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
        for _ in 0..<settings.replays { world.after(world.int(15_000...70_000), nil, "operator replays dead letters") { [self] in replayDeadLetters() } }
        if settings.promptReplays { watchDeadLetters(seen: 0) }
        schedule(settings.copies, "fault: a signed request copied to another partition") { [self] in
            guard settings.partitions > 1, !signedSent.isEmpty else { return }
            var copy = world.pick(signedSent)
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

    /// An operator who watches the dead letters: every second, each letter that landed since the
    /// last look is replayed 0.5-3 s later (`replayDeadLetters`' checks and builder).
    private func watchDeadLetters(seen: Int) {
        world.after(1_000, nil, "operator looks at the dead letters") { [self] in
            let letters = cluster.records(Self.topics.deadLetters)
            for record in letters.dropFirst(seen) {
                world.after(world.int(500...3_000), nil, "operator replays a dead letter") { [self] in replayDeadLetters([record]) }
            }
            if world.nowMs < Self.epochMs + Self.endMs - 5_000 { watchDeadLetters(seen: letters.count) }
        }
    }

    /// What `dlq replay` does with `letters` (every dead letter written so far by default): a
    /// letter whose seal, target and replay policy allow it goes back to its original topic and
    /// partition, signed with the replay key (`DeadLetterReplayer.replayMessage`, the tool's own builder).
    private func replayDeadLetters(_ letters: [KafkaMessage]? = nil) {
        let replayer = DeadLetterReplayer(properties: [:], auditTopic: Self.topics.audit, operatorName: "sim-operator",
                                          replayKeys: SimWorkload.replayKeys, targetTopics: [Self.topics.requests, Self.topics.reconcile])
        for record in letters ?? cluster.records(Self.topics.deadLetters) {
            let entry = DeadLetterEntry(message: record)
            guard replayer.refusal(entry, to: nil, nowMs: world.nowMs) == nil, let provenance = entry.provenance,
                  DeadLetterReplayPolicy.replayVerdict(provenance: provenance, summary: entry.summary, nowMs: world.nowMs).isReplayable else { continue }
            let message = DeadLetterReplayer.replayMessage(entry, provenance: provenance, to: provenance.originalTopic, operatorName: "sim-operator",
                                                           signer: SimWorkload.replayKeys.signer(nowMs: world.nowMs), partitionCount: 1, nowMs: world.nowMs)
            let offset = cluster.append(message, partition: message.partition ?? cluster.partition(for: message))
            carriedOut["replay", default: 0] += 1
            world.note("operator replays \(entry.identifier) to \(provenance.originalTopic)@\(offset)")
        }
    }

    // MARK: - Checks

    /// Whether every request sent has a final result or a dead letter.
    private func allAnswered() -> Bool {
        sent.allSatisfy { cluster.answered.contains($0.requestID) }
    }

    private func check() -> SimulationReport {
        let verdict = SimulationPromises.judge(sent: sent, cluster: cluster, issuer: issuer)
        carriedOut.merge(verdict.paths, uniquingKeysWith: +)
        return SimulationReport(seed: seed, settings: settings.description, violations: cluster.violations + probe.violations,
                                trace: world.trace, events: world.ran, requests: verdict.requests, calls: verdict.calls, finals: verdict.finals,
                                identicalDuplicates: verdict.identical, deadLetters: verdict.deadLetters, coverage: coverage())
    }

    /// The paths this run took: the workers' counters (every process, killed ones included) and
    /// what the schedule carried out.
    private func coverage() -> SimulationCoverage {
        var schedule = carriedOut
        schedule["applied-late"] = issuer.appliedLate
        for (path, count) in issuer.applied { schedule["applied/\(path)"] = count }
        schedule["recovered"] = cluster.records(Self.topics.markers).filter { record in
            CallMarker.decode(record.value).map { $0.state == .completed && $0.outcome == .recovered } ?? false
        }.count
        return SimulationCoverage(registries: nodes.map(\.metrics), schedule: schedule)
    }
}
