import Contract
import Foundation
import Issuers
import Kafka
import Pipeline
import Recovery
import Simulator

/// One seeded schedule: three or four real workers (`SimNode`) in one consumer group over a
/// `SimCluster`, the `SimIssuer`, and a workload on recurring cards of three issuers: single-use
/// Apple Pay (Imprint, Gnosis Pay) and Google Wallet (Imprint, DCS) handshakes, Legacy Google Pay
/// (Imprint; its ids recur across attempts), signed and unsigned programs, reply routes, some
/// requests sent twice and some signed ones copied to another partition. Faults are drawn from the
/// seed: cooperative or eager rebalances, workers joining and leaving, kill -9 (restarted later, as
/// an orchestrator would), members the coordinator evicts while they go on working (zombies),
/// produce errors that may or may not have written, slow or missing commit answers, markers
/// partitions that cannot be read, issuer calls longer than the revoke drain, answers lost after
/// the issuer applied the call, seeks that fail (refused, or accepted and never carried out), a
/// clock per worker off by up to a second. Then the promises are checked (`Report.violations`): a
/// handshake (and a request, by its trace) reaches the issuer at most once; every request gets a
/// final result (or a dead letter) by its deadline plus the reconciliation tiers; no request gets
/// two different finals; every first final is true to the issuer (`FinalTruth`); every result is
/// on the request's reply route; a message that failed its signature check is never answered; a
/// group's committed offset never moves backwards; no record reaches intake before its
/// assignment's marker catch-up finished.
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
        /// within their bound, half of them stored by the coordinator all the same.
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
        /// The share of Imprint requests that are Apple Pay (Gnosis Pay's always are; DCS's never).
        var appleShare = 0.0
        /// The share of Imprint's other requests that are Legacy Google Pay (its handshake recurs).
        var legacyShare = 0.0
        /// Whether Imprint's backend signs its requests (Gnosis Pay's always does; DCS's never).
        var imprintSigned = false
        /// How many signed requests someone copies byte for byte to another partition.
        var copies = 0
        /// The share of requests that name a reply route (Spring Kafka's request-reply headers).
        var replyShare = 0.0
        var mutations = CoreMutations()

        var description: String {
            "workers=\(workers) partitions=\(partitions) requests=\(requests) cards=\(cards) \(cooperative ? "cooperative" : "eager") "
                + "drain=\(drainMs) rebalance_timeout=\(rebalanceTimeoutMs) session_timeout=\(sessionTimeoutMs) produce_faults=\(produceFaultRate) resend=\(resendRate) "
                + "kills=\(kills) losses=\(losses) joins=\(joins) leaves=\(leaves) hiccups=\(hiccups) unreadable=\(unreadable) outages=\(outages) "
                + "seek_faults=\(seekFaultRate) skew=\(skewMs) max_pending=\(maxPending) first_offset=\(firstOffset) rename=\(rename) replays=\(replays) "
                + "apple=\(appleShare) legacy=\(legacyShare) imprint_signed=\(imprintSigned) copies=\(copies) replies=\(replyShare)"
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
            appleShare = world.pick([0.2, 0.4, 0.7])
            imprintSigned = world.chance(0.5)
            copies = world.pick([0, 0, 1, 3])
            replyShare = world.pick([0, 0.3, 0.7])
            legacyShare = world.pick([0, 0.2, 0.5])
            commitTimeoutRate = world.pick([0, 0, 0.1, 0.33])
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
    /// The signed request messages produced (what a hostile copy copies).
    private var signedSent: [KafkaOutgoingMessage] = []

    /// A request the workload produced, and what its finals are judged by.
    struct Sent {
        var requestID: String
        var program: String
        var card: String
        var wallet: Wallet
        /// `ReconcileQuery.deviceRef`'s form.
        var device: String
        /// The reply route its headers name (nil: the default results topic).
        var route: ReplyRoute?
        var handshake: String
        var producedAtMs: Int64
        var deadlineMs: Int64
    }

    init(seed: UInt64, mutations: CoreMutations, tracing: Bool) {
        self.seed = seed
        settings = Settings(seed: seed, mutations: mutations)
        world = SimWorld(seed: seed, startMs: Self.epochMs, tracing: tracing)
        let topics = Self.topics
        cluster = SimCluster(world: world, partitions: [topics.requests: settings.partitions, topics.markers: settings.partitions,
                                                        topics.results: 1, topics.audit: 1, topics.reconcile: 2, topics.deadLetters: 1,
                                                        topics.parked: 1, Self.replyTopic: 2],
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
            let program = world.pick(["sim-imprint", "sim-imprint", "sim-dcs", "sim-gnosis"])
            let card = "c\(index)"
            cards.append((program, card))
            // Most cards answer at once; the rest slowly, lose answers, or refuse.
            issuer.behaviours[card] = world.chance(0.55) ? .ok : world.pick(behaviours)
        }
        for _ in 0..<settings.workers { startWorker() }
        for index in 0..<settings.requests {
            let card = world.pick(cards)
            let wallet: Wallet = if card.program == "sim-gnosis" || (card.program == "sim-imprint" && world.chance(settings.appleShare)) {
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
                let made = request(id: "r\(index)", program: card.program, card: card.id, device: device, wallet: wallet,
                                   walletID: wallet == .googlePay ? "lw-\(device)" : "w\(index)", route: route)
                guard let made else { return cluster.violation("request r\(index): no Apple device could be made") }
                let request = made.request
                sent.append(Sent(requestID: request.requestID, program: card.program, card: card.id, wallet: request.wallet,
                                 device: ReconcileQuery.deviceRef(for: request) ?? "?", route: route, handshake: HandshakeReference.of(request) ?? "?",
                                 producedAtMs: world.nowMs, deadlineMs: world.nowMs + Self.windowMs))
                let partition = cluster.partition(for: made.message)
                let message = signed(made.message, program: card.program, partition: partition)
                if message.headers.contains(where: { $0.key == RequestSignature.header }) { signedSent.append(message) }
                let offset = cluster.append(message, partition: partition)
                world.note("request \(request.requestID) (\(card.program) \(request.wallet.rawValue), card \(card.id): \(issuer.behaviours[card.id].map { "\($0)" } ?? "ok")) at \(partition)@\(offset)")
                if let resend { world.after(resend, nil, "request produced again") { [self] in
                    let offset = cluster.append(message, partition: partition)
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

    /// A provisioning request, keyed by card: Apple Pay from the simulated phone `device` (a nonce
    /// drawn from the schedule), or Google Wallet or Legacy Google Pay with wallet id `walletID`.
    /// Nil when the phone's certificates could not be made.
    private func request(id: String, program: String, card: String, device: String, wallet: Wallet, walletID: String, route: ReplyRoute?)
        -> (request: ProvisioningRequest, message: KafkaOutgoingMessage)? {
        var value: [String: JSONValue] = [
            "version": .integer(1), "request_id": .string(id), "program": .string(program), "kind": .string("provision"),
            "card": .object(["id": .string(card), "last4": .string("4242"), "user_id": .string("u-\(card)")]),
            "started_at": .string(RFC3339.format(milliseconds: world.nowMs)),
        ]
        value["wallet"] = .string(wallet.rawValue)
        switch wallet {
        case .applePay:
            guard let phone = Self.phones[device] else { return nil }
            let nonce = (0..<16).map { _ in UInt8(world.int(0...255)) }
            let signature = (0..<70).map { _ in UInt8(world.int(0...255)) }
            value["apple"] = .object(["certificates": .array(phone.map { .string($0) }), "nonce": .string(Crypto.base64Encode(nonce)),
                                      "nonce_signature": .string(Crypto.base64Encode(signature)), "device_type": .string("iphone"),
                                      "app_version": .string("5.2.0")])
        case .googleWallet:
            value["google"] = .object(["wallet_id": .string(walletID), "device_id": .string(device), "google_opc_requested": .bool(false)])
        case .googlePay:
            value["google"] = .object(["wallet_id": .string(walletID), "device_id": .string(device)])
        }
        let bytes = JSONWriter.encode(.object(value))
        guard case .decoded(let request) = RequestDecoder.decode(bytes) else { return nil }
        var message = KafkaOutgoingMessage(topic: Self.topics.requests, key: Array(card.utf8), value: bytes, timestampMs: world.nowMs)
        message.headers.append(KafkaHeader(key: "traceparent", string: "00-\(Self.traceID(id))-\(Self.traceID(id).prefix(16))-01"))
        if let route {
            message.headers.append(KafkaHeader(key: ReplyRoute.topicHeader, string: route.topic ?? ""))
            if let partition = route.partition {
                message.headers.append(KafkaHeader(key: ReplyRoute.partitionHeader, value: withUnsafeBytes(of: partition.bigEndian, Array.init)))
            }
            message.headers.append(KafkaHeader(key: ReplyRoute.correlationHeader, value: route.correlationID))
        }
        return (request, message)
    }

    /// `message` signed for `partition` (v3) with its program's key, when the program signs.
    private func signed(_ message: KafkaOutgoingMessage, program: String, partition: Int32) -> KafkaOutgoingMessage {
        guard program == "sim-gnosis" || (program == "sim-imprint" && settings.imprintSigned) else { return message }
        var pinned = message
        pinned.partition = partition
        let key = Self.environment[program == "sim-gnosis" ? "SIM_GNOSIS_SIGNING_KEY" : "SIM_IMPRINT_SIGNING_KEY"] ?? ""
        return RequestSigner(secret: Sensitive(key)).signed(pinned, partitionCount: Int(settings.partitions),
                                                                                                 nowMs: world.nowMs)
    }

    /// The trace id of request `id`'s `traceparent`, as its backend would have started it.
    static func traceID(_ id: String) -> String {
        String(Crypto.hex(Crypto.sha256(utf8: "trace \(id)")).prefix(32))
    }

    /// Three simulated phones' PassKit certificates (leaf, intermediate; base64 DER), made once per
    /// process: real chains the workers verify. The nonce and its signature are the schedule's.
    static let phones: [String: [String]] = {
        var phones: [String: [String]] = [:]
        for index in 0..<3 {
            guard let handshake = try? SimulatedDevice(name: "a\(index)").appleHandshake() else { continue }
            phones["a\(index)"] = handshake.certificates
        }
        return phones
    }()

    // MARK: - Checks

    /// Whether every request sent has a final result or a dead letter.
    private func allAnswered() -> Bool {
        sent.allSatisfy { cluster.answered.contains($0.requestID) }
    }

    private func check() -> SimulationReport {
        var calls = 0
        let recurring = Set(sent.filter { $0.wallet == .googlePay }.map(\.handshake))
        for (handshake, count) in issuer.calls.sorted(by: { $0.key < $1.key }) {
            calls += count
            if count > 1 && !recurring.contains(handshake) { cluster.violation("handshake \(handshake) reached the issuer \(count) times") }
        }
        let requestOfTrace = Dictionary(sent.map { (Self.traceID($0.requestID), $0.requestID) }, uniquingKeysWith: { first, _ in first })
        for (trace, count) in issuer.callsPerTrace.sorted(by: { $0.key < $1.key }) {
            guard let requestID = requestOfTrace[trace] else {
                cluster.violation("\(count) issuer calls carried no trace of a request sent (trace \(trace))")
                continue
            }
            if count > 1 { cluster.violation("request \(requestID) reached the issuer \(count) times") }
        }
        var finals: [String: [(result: ProvisioningResult, atMs: Int64, replay: Bool)]] = [:]
        let routes = Dictionary(sent.map { ($0.requestID, $0.route) }, uniquingKeysWith: { first, _ in first })
        for record in cluster.records(Self.topics.results) + cluster.records(Self.replyTopic) {
            guard let result = try? ProvisioningResult.decode(record.value) else { continue }
            if result.code == .unauthenticated { cluster.violation("request \(result.requestID): a message that failed its signature check was answered") }
            if let misrouted = Self.misrouting(record, result: result, route: routes[result.requestID] ?? nil) {
                cluster.violation("request \(result.requestID): \(Self.describe(result)) \(misrouted)")
            }
            guard result.isFinal else { continue }
            if record.topic == Self.replyTopic { carriedOut["routed", default: 0] += 1 }
            if (routes[result.requestID] ?? nil)?.topic == Self.missingReplyTopic { carriedOut["route_refused", default: 0] += 1 }
            let replay = record.headers.contains { $0.key == DeadLetterHeader.replayOf }
            finals[result.requestID, default: []].append((result, record.timestampMs ?? 0, replay))
        }
        // A copy refused as unauthentic is dead-lettered too, and answers nothing for the original.
        let deadLettered = Set(cluster.records(Self.topics.deadLetters).compactMap { record -> String? in
            guard !record.headers.contains(where: { $0.key == DeadLetterHeader.code && $0.value == Array("unauthenticated".utf8) }),
                  let document = try? JSONParser().parse(record.value), let id = document["request_id"]?.stringValue,
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
            let facts = issuer.facts(handshake: request.handshake, trace: Self.traceID(requestID), card: request.card, wallet: request.wallet,
                                     device: request.device)
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
        for (path, count) in issuer.applied { schedule["applied/\(path)"] = count }
        schedule["recovered"] = cluster.records(Self.topics.markers).filter { record in
            CallMarker.decode(record.value).map { $0.state == .completed && $0.outcome == .recovered } ?? false
        }.count
        return SimulationCoverage(series: series, schedule: schedule)
    }

    /// Why `record`, a result for a request whose headers named `route`, is not where the contract
    /// puts it: on the route's topic and partition with its correlation id echoed; a route to a
    /// topic the cluster lacks is refused, and that rejection goes to the default results topic.
    static func misrouting(_ record: KafkaMessage, result: ProvisioningResult, route: ReplyRoute?) -> String? {
        let correlation = record.headers.last { $0.key == ReplyRoute.correlationHeader }?.value
        guard let route, route.topic != missingReplyTopic else {
            if record.topic != topics.results { return "went to \(record.topic), not the default results topic" }
            if route != nil, result.status != .rejected || result.code != .invalidRequest {
                return "answered a reply route to a missing topic, which must be rejected invalid_request"
            }
            return nil
        }
        if record.topic != route.topic { return "went to \(record.topic), not the request's reply topic" }
        if let partition = route.partition, record.partition != partition { return "went to partition \(record.partition), not the one asked for" }
        if correlation != route.correlationID { return "does not echo the request's correlation id" }
        return nil
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
                              "SIM_IMPRINT_KEY": "imprint-key", "SIM_DCS_KEY": "dcs-key", "SIM_GNOSIS_KEY": "gnosis-key",
                              "SIM_IMPRINT_SIGNING_KEY": "sim-imprint-signing-0123456789abcdef0123456789abcdef",
                              "SIM_GNOSIS_SIGNING_KEY": "sim-gnosis-signing-0123456789abcdef0123456789abcdef", "SIM_DCS_SECRET": "dcs-secret-0123456789",
                              "SIM_REPLAY_KEY": replaySecret]
    private static let replaySecret = "sim-replay-key-0123456789abcdef0123456789abcdef"
    /// The operator's replay keys: the workers' one replay key (`dlq.replay_signing_secret_env`).
    static let replayKeys = ReplayKeyring(keys: [ReplayKeyring.Key(id: nil, secret: Sensitive(replaySecret))])

    /// A worker's configuration: three programs (Imprint with a state query, DCS and Gnosis Pay
    /// without), no payload encryption (the simulation checks decisions, not JWE), 20 s windows, short
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
        var gnosis = ProgramConfiguration(name: "sim-gnosis", issuer: .gnosis, baseURL: "http://gnosis.sim", apiKey: .environment("SIM_GNOSIS_KEY"))
        gnosis.timeoutMs = 10_000
        gnosis.requestSigningSecret = .environment("SIM_GNOSIS_SIGNING_KEY")
        if settings.imprintSigned { imprint.requestSigningSecret = .environment("SIM_IMPRINT_SIGNING_KEY") }
        configuration.programs = ["sim-imprint": imprint, "sim-dcs": dcs, "sim-gnosis": gnosis]
        configuration.replyTopics = [replyTopic, "sim.reply.*"]
        return configuration
    }
}
