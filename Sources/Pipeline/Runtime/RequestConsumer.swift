import Contract
import Foundation
import Kafka
import Observability
import Recovery
import Synchronization

/// The requests group's consumer loop (a `ConsumerLoop` over the worker's `OffsetLedger`): polls
/// without stopping, hands messages to the flow, pauses partitions for backpressure and marker
/// catch-up, commits contiguous offsets every 100 ms, and handles rebalances (revoke: stop, drain
/// within a bound while the other partitions go on, commit, release; lost: commit nothing). Every
/// partition's life is one `PartitionLifecycle` value; each poll turn (`turn`) carries out what it says.
final class RequestConsumer: Sendable {
    let context: WorkerContext
    let flow: RequestFlow
    let catchUp: MarkerCatchUp
    let loop: ConsumerLoop
    let state = Mutex(RequestLoopState())
    /// Measures lag and samples the fetch watchdog (every 5 s, off the poll thread).
    let lagQueue: any WorkQueue
    /// When the loop started and last measured lag (poll thread).
    private let turnClock = Mutex<(startedMs: Int64?, lastLagMs: Int64)>((nil, 0))

    /// The group consumer (the loop's).
    var consumer: any GroupConsumer { loop.consumer }

    init(context: WorkerContext, flow: RequestFlow, runtime: WorkerRuntime) throws(KafkaError) {
        self.context = context
        self.flow = flow
        let base = context.configuration.consumerProperties
        let properties = KafkaConsumerRole.committingMember(groupID: base["group.id"] ?? context.configuration.groupID,
                                                            assignmentStrategy: KafkaRuntime.defaultAssignor).applied(to: base)
        // Every record is held to the requests topic's bounds as it is read: nothing of one over
        // them is copied (intake dead-letters it as its sizes and digest).
        let bounds = flow.intake.recordBounds
        let limits = KafkaRecordLimits(maxKeyBytes: bounds.maxKeyBytes, maxValueBytes: bounds.maxValueBytes,
                                       maxHeaderCount: bounds.maxHeaderCount, maxHeaderBytes: bounds.maxHeaderBytes,
                                       digest: { Crypto.sha256(raw: $0) })
        loop = try ConsumerLoop(runtime: runtime, properties: KafkaStatisticsMetrics.withInterval(properties), recordLimits: limits,
                                ledger: context.ledger, commitIntervalMs: 100, forcedCommitTimeoutMs: context.configuration.forcedCommitTimeoutMs,
                                commitTimeouts: context.metrics.commitTimeouts, logger: context.logger,
                                statistics: context.metrics.kafkaStatistics.handler(for: .requests, topic: context.configuration.topics.requests))
        let reader = try runtime.makeMarkerReader(base, context.configuration.topics.markers, "marker-reader", [:])
        catchUp = MarkerCatchUp(reader: reader, queue: context.executor.serialQueue(label: "provisioner.marker-catch-up", onPool: false),
                                logger: context.logger, undecodable: context.metrics.markers.undecodableMarkers,
                                withoutCallOutOfHorizon: context.mutations.answersWithoutCallOutOfHorizon)
        lagQueue = context.executor.serialQueue(label: "provisioner.consumer-lag", onPool: false)
        // Weak: the loop (and its relay) must not keep its owner alive.
        loop.attach(.init(assigned: { [weak self] in self?.assigned($0) }, revoked: { [weak self] in self?.revoked($0) ?? .now },
                          lost: { [weak self] in self?.lost($0) }))
    }

    /// Ready once it has been given partitions (or has run for a while in the group with none)
    /// and the last poll saw no broker-wide error.
    var isReady: Bool {
        !loop.isStopping && state.withLock { $0.hasJoined && $0.lastPollError == nil }
    }

    /// Partitions currently assigned.
    var assignedPartitions: Set<TopicPartition> { state.withLock { $0.lifecycle.assigned } }

    /// Partitions paused for backpressure or catch-up.
    var pausedCount: Int {
        state.withLock { $0.paused.count }
    }

    let lag = Mutex<[TopicPartition: Int64]>([:])
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
            let (paused, flowVersion) = state.withLock { ($0.paused, $0.flowVersion) }
            let round = LagRound(consumer: consumer, positions: context.ledger.receivedPositions, paused: paused, flowVersion: flowVersion)
            lag.withLock { $0 = round.lag }
            let stalls = watchdog.withLock { $0.observe(round.samples, nowMs: context.clock()) }
            if !stalls.isEmpty { state.withLock { $0.stalls.append(contentsOf: stalls) } }
        }
    }

    /// Restarts the partitions the watchdog found stuck (poll thread), each one still owned by the
    /// same generation and not paused by this loop: resumes it and seeks it to the next offset not
    /// received, or, when that did not help before, gives it up and takes it again there
    /// (`FetchWatchdog.Remedy`).
    func restartStalled(stopping: Bool) {
        let stalls = state.withLock { state -> [FetchWatchdog.Stall] in
            defer { state.stalls.removeAll() }
            guard !stopping else { return [] }
            let stalls = state.stalls.filter { !state.paused.contains($0.partition) }
            if !stalls.isEmpty { state.restarts += 1 }
            return stalls
        }
        for stall in stalls where context.ledger.isOwned(stall.partition, generation: stall.generation) {
            context.metrics.fetchStalls.increment()
            var remedy = stall.remedy
            var failure: String?
            do {
                if remedy == .refetch, try !consumer.refetch(stall.partition, from: stall.seekTo) {
                    remedy = .seek
                }
                if remedy == .seek {
                    consumer.resume([stall.partition])
                    try consumer.seek(stall.partition, to: stall.seekTo, timeoutMs: 0)
                }
            } catch {
                failure = error.description
            }
            let done = remedy == .refetch ? "given up and taken again" : "resumed and sought"
            context.logger.warning("requests partition stopped delivering records with records waiting: \(done) at the next offset not received",
                                   [("partition", .integer(Int64(stall.partition.partition))), ("offset", .integer(stall.seekTo)),
                                    ("waiting", .integer(stall.waiting)), ("stalled_ms", .integer(stall.stalledMs)),
                                    ("remedy", .string(remedy.rawValue)), ("seek_error", .string(failure ?? "none"))])
        }
    }

    // MARK: - The poll loop

    /// One poll turn (the loop's thread): what the loop's phase says (poll, drain, finish), the
    /// records of one poll through the gate to intake, a deferred revoke finished when its
    /// partitions settled, flow control, the watchdog's restarts, the commit when due, and the
    /// lag measured every 5 s. False once the loop has finished (committed, left the group).
    func turn() -> Bool {
        let now = context.clock()
        let startedMs = turnClock.withLock { clock -> Int64 in
            if clock.startedMs == nil { clock.startedMs = now }
            return clock.startedMs ?? now
        }
        let turn = loop.nextTurn(nowMs: now) { context.ledger.unsettledCount() }
        if case .finish(let unfinished) = turn {
            if unfinished > 0 {
                context.logger.warning("shutdown drain bound reached; unfinished requests will be redelivered",
                                       [("unsettled", .integer(Int64(unfinished)))])
            }
            finishRevoke(all: true)
            loop.finish(nowMs: context.clock())
            catchUp.close()
            return false
        }
        let stopping = turn == .drain
        if stopping { pauseAll() }
        // Take no more than max_pending leaves room for: whatever a starved poll thread finds
        // queued would otherwise all come in at once, before the partitions can be paused
        // (pausing drops records fetched but not yet taken).
        let room = context.configuration.maxPending - context.ledger.unsettledCount()
        let results = consumer.poll(maxMessages: min(512, max(1, room)), timeoutMs: 20)
        var sawError: String?
        // A poll's records of one partition go to intake in one hop (`RequestFlow.accept`).
        var batches: [TopicPartition: [(message: KafkaMessage, generation: UInt64)]] = [:]
        for result in results {
            switch result {
            case .success(let message):
                let partition = TopicPartition(topic: message.topic, partition: message.partition)
                // The gate: a record of an assignment that has not caught up never reaches intake.
                guard admit(partition, offset: message.offset),
                      let generation = context.ledger.track(partition, offset: message.offset) else { continue }
                batches[partition, default: []].append((message, generation))
            case .failure(let error):
                if error.code == .allBrokersDown || error.isFatal { sawError = error.description }
                if context.consumerFault.report(error, nowMs: context.clock()) {
                    context.logger.warning("consumer error", [("error", .string(error.description))])
                }
            }
        }
        for (partition, records) in batches { flow.accept(records, partition: partition) }
        state.withLock { state in
            state.lastPollError = sawError
            if !state.hasJoined && context.clock() - startedMs > 10_000 { state.hasJoined = true }
        }
        finishRevoke(all: false)
        applyFlowControl(stopping: stopping)
        restartStalled(stopping: stopping)
        loop.commitIfDue(force: false, nowMs: context.clock())
        let measure = turnClock.withLock { clock -> Bool in
            guard context.clock() - clock.lastLagMs >= 5_000 else { return false }
            clock.lastLagMs = context.clock()
            return true
        }
        if measure { measureLag() }
        return true
    }

    func pauseAll() {
        let action = state.withLock { $0.lifecycle.pauseAll() }
        carryOut(action)
        context.metrics.pausedPartitions.set(Double(pausedCount))
        exportPaused()
    }

    /// The lifecycle's gate for one received record (poll thread): true when it may reach intake;
    /// a refused one of a partition still catching up rewinds the partition to it.
    func admit(_ partition: TopicPartition, offset: Int64) -> Bool {
        let admission = state.withLock { state in
            context.mutations.admitBeforeCatchUp && state.lifecycle.phase(of: partition).map { $0 != .draining } == true
                ? .deliver : state.lifecycle.admit(partition, offset: offset, checkRewind: !context.mutations.rewindUnchecked)
        }
        let action: PartitionLifecycle.Action?
        switch admission {
        case .deliver:
            return true
        case .awaitingRewind:
            return false
        case .rewindLost(let again):
            carryOut(again)
            context.logger.warning("a record arrived past the offset its partition was rewound to (the seek did not take effect): rewound again",
                                   [("partition", .integer(Int64(partition.partition))), ("offset", .integer(offset))])
            context.metrics.rewindsRepeated.increment()
            return false
        case .refuse(let refused):
            action = refused
        }
        if let action {
            carryOut(action)
            context.logger.notice("a record arrived before its partition's marker catch-up finished: not handled; the partition is rewound to it",
                                  [("partition", .integer(Int64(partition.partition))), ("offset", .integer(offset))])
        }
        context.metrics.recordsBeforeCatchUp.increment()
        return false
    }

    /// Carries out a lifecycle action (poll thread).
    func carryOut(_ action: PartitionLifecycle.Action) {
        switch action {
        case .pause(let partitions):
            consumer.pause(partitions)
        case .resume(let partitions):
            consumer.resume(partitions)
        case .rewind(let partition, let offset):
            consumer.pause([partition])
            do {
                try consumer.seek(partition, to: offset, timeoutMs: 0)
            } catch {
                context.logger.warning("could not rewind a partition to a record received before its catch-up",
                                       [("partition", .integer(Int64(partition.partition))), ("error", .string(error.description))])
            }
        }
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
    /// partitions whose marker catch-up finished (`PartitionLifecycle.turn`).
    func applyFlowControl(stopping: Bool) {
        guard !stopping else { return }
        let pending = context.ledger.unsettledCount()
        let limit = context.configuration.maxPending
        let (action, wasBackpressured, isBackpressured) = state.withLock { state in
            state.unsettledPeak = max(state.unsettledPeak, pending)
            let before = state.lifecycle.isBackpressured
            return (state.lifecycle.turn(pending: pending, limit: limit), before, state.lifecycle.isBackpressured)
        }
        if let action { carryOut(action) }
        if !wasBackpressured && isBackpressured {
            context.metrics.backpressurePauses.increment()
            context.logger.info("backpressure: partitions paused", [("pending", .integer(Int64(pending)))])
        } else if wasBackpressured && !isBackpressured {
            context.logger.info("backpressure: partitions resumed", [("pending", .integer(Int64(pending)))])
        }
        context.metrics.pausedPartitions.set(Double(pausedCount))
        exportPaused()
    }
}
