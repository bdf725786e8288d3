import Contract
import Foundation
import Kafka
import Observability
import Recovery
import Synchronization

/// The requests group's consumer loop (a `ConsumerLoop` over the worker's `OffsetLedger`): polls
/// without stopping, hands messages to the flow, pauses partitions for backpressure and marker
/// catch-up, commits contiguous offsets every 100 ms, and handles rebalances (revoke: stop, drain
/// within a bound, commit, release; lost: commit nothing).
final class RequestConsumer: Sendable {
    let context: WorkerContext
    let flow: RequestFlow
    let catchUp: MarkerCatchUp
    let loop: ConsumerLoop
    let state = Mutex(LoopState())

    /// The group consumer (the loop's).
    var consumer: KafkaConsumer { loop.consumer }

    struct LoopState {
        var backpressurePaused = false
        var catchingUp: Set<TopicPartition> = []
        var readyToResume: Set<TopicPartition> = []
        var assigned: Set<TopicPartition> = []
        var hasJoined = false
        var lastPollError: String?
        /// Partitions of the requests topic, as metadata last said (the whole the limits are shared over).
        var totalPartitions: Int?
        /// Most requests unsettled at once, read after each poll's records were taken (only they
        /// raise the count).
        var unsettledPeak = 0
        /// Partitions last exported as paused (`provisioner_partition_paused` = 1).
        var exportedPaused: Set<TopicPartition> = []
        /// Raised on every pause or resume this loop makes (`FetchWatchdog.Sample.flowVersion`).
        var flowVersion: UInt64 = 0
        /// Stuck partitions the watchdog found, for the poll thread to restart.
        var stalls: [FetchWatchdog.Stall] = []

        /// Partitions paused now: all assigned under backpressure, else those catching up.
        var paused: Set<TopicPartition> { backpressurePaused ? assigned : catchingUp.intersection(assigned) }
    }

    init(context: WorkerContext, flow: RequestFlow) throws(KafkaError) {
        self.context = context
        self.flow = flow
        let base = context.configuration.consumerProperties
        let properties = KafkaConsumerRole.committingMember(groupID: base["group.id"] ?? context.configuration.groupID,
                                                            assignmentStrategy: KafkaRuntime.defaultAssignor).applied(to: base)
        loop = try ConsumerLoop(properties: properties, ledger: context.ledger, commitIntervalMs: 100, logger: context.logger)
        catchUp = try MarkerCatchUp(properties: context.configuration.consumerProperties, topic: context.configuration.topics.markers,
                                    logger: context.logger, undecodable: context.metrics.undecodableMarkers)
        loop.attach(.init(assigned: { [self] in assigned($0) }, revoked: { [self] in revoked($0) }, lost: { [self] in lost($0) }))
    }


    /// Ready once it has been given partitions (or has run for a while in the group with none)
    /// and the last poll saw no broker-wide error.
    var isReady: Bool {
        !loop.isStopping && state.withLock { $0.hasJoined && $0.lastPollError == nil }
    }

    /// Partitions currently assigned.
    var assignedPartitions: Set<TopicPartition> { state.withLock { $0.assigned } }

    /// Partitions paused for backpressure or catch-up.
    var pausedCount: Int {
        state.withLock { $0.paused.count }
    }

    let lag = Mutex<[TopicPartition: Int64]>([:])
    let lagQueue = DispatchQueue(label: "provisioner.consumer-lag")
    /// Used on `lagQueue` only (a Mutex to be Sendable).
    let watchdog = Mutex(FetchWatchdog())

    /// Requests on the topic not yet answered and committed, summed over assigned partitions, as
    /// of the last measurement (every 5 s): high watermark minus committed offset, as Kafka's
    /// tools and lag-based autoscalers count it.
    var consumerLag: Int64 { lag.withLock { $0.values.reduce(0, +) } }

    /// Most requests received and not yet settled at once since the start, read after each poll
    /// (where the count can only have risen) under the loop's own lock (metrics).
    var unsettledPeak: Int { state.withLock { $0.unsettledPeak } }

    /// The requests topic's partition count, read at start by the worker (the whole the limits are shared over).
    func setTotalPartitions(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.totalPartitions = count }
    }

    func measureLag() {
        lagQueue.async { [self] in
            if let count = try? consumer.partitionCount(topic: context.configuration.topics.requests, timeoutMs: 2_000) {
                setTotalPartitions(count)
            }
            var measured: [TopicPartition: Int64] = [:]
            var samples: [TopicPartition: FetchWatchdog.Sample] = [:]
            let (paused, flowVersion) = state.withLock { ($0.paused, $0.flowVersion) }
            for (partition, position) in context.ledger.receivedPositions {
                guard let marks = try? consumer.watermarks(partition, timeoutMs: 2_000) else { continue }
                var start = position.committed
                if start == nil {
                    start = (try? consumer.committed([partition], timeoutMs: 2_000))?.first.map { $0.offset >= 0 ? $0.offset : marks.low }
                }
                measured[partition] = max(0, marks.high - (start ?? marks.low))
                samples[partition] = FetchWatchdog.Sample(generation: position.generation, nextOffset: position.next ?? start ?? marks.low,
                                                          highWatermark: marks.high, paused: paused.contains(partition),
                                                          flowVersion: flowVersion)
            }
            lag.withLock { $0 = measured }
            let stalls = watchdog.withLock { $0.observe(samples, nowMs: context.clock()) }
            if !stalls.isEmpty { state.withLock { $0.stalls.append(contentsOf: stalls) } }
        }
    }

    /// Restarts the partitions the watchdog found stuck (poll thread): resumes each one still
    /// owned by the same generation and not paused by this loop, and seeks it to the next offset
    /// not received.
    func restartStalled(stopping: Bool) {
        let stalls = state.withLock { state -> [FetchWatchdog.Stall] in
            defer { state.stalls.removeAll() }
            guard !stopping else { return [] }
            let stalls = state.stalls.filter { !state.paused.contains($0.partition) }
            if !stalls.isEmpty { state.flowVersion += 1 }
            return stalls
        }
        for stall in stalls where context.ledger.isOwned(stall.partition, generation: stall.generation) {
            context.metrics.fetchStalls.increment()
            consumer.resume([stall.partition])
            var failure: String?
            do {
                try consumer.seek(stall.partition, to: stall.seekTo, timeoutMs: 0)
            } catch {
                failure = error.description
            }
            context.logger.warning("requests partition stopped delivering records with records waiting: resumed and sought to the next offset not received",
                                   [("partition", .integer(Int64(stall.partition.partition))), ("offset", .integer(stall.seekTo)),
                                    ("waiting", .integer(stall.waiting)), ("stalled_ms", .integer(stall.stalledMs)),
                                    ("seek_error", .string(failure ?? "none"))])
        }
    }

    // MARK: - The poll loop

    func run() {
        let startedMs = context.clock()
        var lastLagMs: Int64 = 0
        while true {
            let turn = loop.nextTurn(nowMs: context.clock()) { context.ledger.unsettledCount() }
            if case .finish(let unfinished) = turn {
                if unfinished > 0 {
                    context.logger.warning("shutdown drain bound reached; unfinished requests will be redelivered",
                                           [("unsettled", .integer(Int64(unfinished)))])
                }
                break
            }
            let stopping = turn == .drain
            if stopping { pauseAll() }
            // Take no more than max_pending leaves room for: whatever a starved poll thread finds
            // queued would otherwise all come in at once, before the partitions can be paused
            // (pausing drops records fetched but not yet taken).
            let room = context.configuration.maxPending - context.ledger.unsettledCount()
            let results = consumer.poll(maxMessages: min(512, max(1, room)), timeoutMs: 20)
            var sawError: String?
            for result in results {
                switch result {
                case .success(let message):
                    guard let generation = context.ledger.track(TopicPartition(topic: message.topic, partition: message.partition),
                                                                offset: message.offset) else { continue }
                    flow.accept(message, generation: generation)
                case .failure(let error):
                    if error.code == .allBrokersDown || error.isFatal { sawError = error.description }
                    context.logger.warning("consumer error", [("error", .string(error.description))])
                }
            }
            state.withLock { state in
                state.lastPollError = sawError
                if !state.hasJoined && context.clock() - startedMs > 10_000 { state.hasJoined = true }
            }
            applyFlowControl(stopping: stopping)
            restartStalled(stopping: stopping)
            loop.commitIfDue(force: false, nowMs: context.clock())
            if context.clock() - lastLagMs >= 5_000 {
                lastLagMs = context.clock()
                measureLag()
            }
        }
        loop.finish(nowMs: context.clock())
        catchUp.close()
    }

    func pauseAll() {
        let assigned = state.withLock { state -> [TopicPartition] in
            state.backpressurePaused = true
            state.flowVersion += 1
            return Array(state.assigned)
        }
        consumer.pause(assigned)
        context.metrics.pausedPartitions.set(Double(assigned.count))
        exportPaused()
    }

    /// Sets the per-partition pause gauge of every partition whose state changed since the last export.
    func exportPaused() {
        let (paused, resumed) = state.withLock { state -> (Set<TopicPartition>, Set<TopicPartition>) in
            let now = state.paused
            defer { state.exportedPaused = now }
            return (now.subtracting(state.exportedPaused), state.exportedPaused.subtracting(now))
        }
        for partition in paused { context.metrics.setPartitionPaused(partition, true) }
        for partition in resumed { context.metrics.setPartitionPaused(partition, false) }
    }

    /// Pauses every partition while too much work is held; resumes below half; resumes
    /// partitions whose marker catch-up finished.
    func applyFlowControl(stopping: Bool) {
        guard !stopping else { return }
        let pending = context.ledger.unsettledCount()
        let limit = context.configuration.maxPending
        enum Action { case none, pause([TopicPartition]), resume([TopicPartition]) }
        let (action, caughtUp) = state.withLock { state -> (Action, [TopicPartition]) in
            state.unsettledPeak = max(state.unsettledPeak, pending)
            let ready = Array(state.readyToResume.intersection(state.assigned))
            state.readyToResume.removeAll()
            for partition in ready { state.catchingUp.remove(partition) }
            if !ready.isEmpty { state.flowVersion += 1 }
            if !state.backpressurePaused && pending >= limit {
                state.backpressurePaused = true
                state.flowVersion += 1
                return (.pause(Array(state.assigned)), [])
            }
            if state.backpressurePaused && pending <= limit / 2 {
                state.backpressurePaused = false
                state.flowVersion += 1
                return (.resume(Array(state.assigned.subtracting(state.catchingUp))), [])
            }
            return (.none, state.backpressurePaused ? [] : ready)
        }
        switch action {
        case .pause(let partitions):
            consumer.pause(partitions)
            context.logger.info("backpressure: partitions paused", [("pending", .integer(Int64(pending)))])
        case .resume(let partitions):
            consumer.resume(partitions)
            context.logger.info("backpressure: partitions resumed", [("pending", .integer(Int64(pending)))])
        case .none:
            break
        }
        if !caughtUp.isEmpty { consumer.resume(caughtUp) }
        context.metrics.pausedPartitions.set(Double(pausedCount))
        exportPaused()
    }
}
