import Pipeline

/// What a seed drew for one schedule (`SimulationRun`): the cluster, the workload's mix and the
/// faults, from a stream of its own so that they do not shift the schedule's draws.
struct SimulationSettings: CustomStringConvertible {
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
    /// How many Worldpay payments the workload sends (most followed by an action on them).
    var payments = 0
    /// How many times the issuers' state queries are down for 5-25 s (reconciliations run out of attempts).
    var queryOutages = 0
    /// Whether an operator (or a replay job) watches the dead letters and replays each one within
    /// seconds of its landing, while copies and finals of its original may still be in flight.
    var promptReplays = false
    var mutations = CoreMutations()

    var description: String {
        "workers=\(workers) partitions=\(partitions) requests=\(requests) cards=\(cards) \(cooperative ? "cooperative" : "eager") "
            + "drain=\(drainMs) rebalance_timeout=\(rebalanceTimeoutMs) session_timeout=\(sessionTimeoutMs) produce_faults=\(produceFaultRate) resend=\(resendRate) "
            + "kills=\(kills) losses=\(losses) joins=\(joins) leaves=\(leaves) hiccups=\(hiccups) unreadable=\(unreadable) outages=\(outages) "
            + "seek_faults=\(seekFaultRate) skew=\(skewMs) max_pending=\(maxPending) first_offset=\(firstOffset) rename=\(rename) replays=\(replays) "
            + "apple=\(appleShare) legacy=\(legacyShare) imprint_signed=\(imprintSigned) copies=\(copies) replies=\(replyShare)"
            + (commitTimeoutRate > 0 ? " commit_timeouts=\(commitTimeoutRate)" : "")
            + (payments > 0 ? " payments=\(payments)" : "") + (queryOutages > 0 ? " query_outages=\(queryOutages)" : "")
            + (promptReplays ? " prompt_replays" : "")
    }

    /// A pinned scenario's settings: `workers` workers at the start, `partitions` partitions, a
    /// cooperative group, and no fault, copy, resend or payment (`SimulationScenario`).
    init(workers: Int, partitions: Int32, mutations: CoreMutations) {
        self.workers = workers
        self.partitions = partitions
        requests = 0
        cards = 0
        self.mutations = mutations
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
        payments = Int(world.pick([0, 0, 4, 10]))
        queryOutages = Int(world.pick([0, 0, 1, 2]))
        promptReplays = world.chance(0.25)
        self.mutations = mutations
    }
}
