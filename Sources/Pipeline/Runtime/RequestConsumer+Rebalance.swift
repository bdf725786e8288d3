import Contract
import Foundation
import Kafka
import Observability
import Recovery
import Synchronization

/// Rebalances of the requests group, on the poll thread inside `poll`: an assignment pauses the
/// partition, fences it and catches its markers up before resuming; a revoke stops new work and
/// is deferred while its partitions drain (the poll thread goes on), then — within
/// `revoke_drain_ms` — commits, releases and gives them up (`finishRevoke`); a loss commits nothing.
extension RequestConsumer {
    // MARK: - Rebalance (called on the poll thread, inside poll)

    func assigned(_ partitions: [TopicPartition]) {
        let requests = partitions.filter { $0.topic == context.configuration.topics.requests }
        guard !requests.isEmpty else { return }
        consumer.pause(requests)
        // The generation this rebalance formed: written in the fences, so a fence that lands late
        // (after its writer gave the partition up) fences no newer owner out.
        let groupGeneration = consumer.groupGeneration
        let committed = (try? consumer.committed(requests, timeoutMs: 5_000)) ?? []
        state.withLock { $0.hasJoined = true }
        for partition in requests {
            let metadata = CommitMetadata(parsing: committed.first { $0.topic == partition.topic && $0.partition == partition.partition }?.metadata)
            let position = metadata.markers
            let generation = context.ledger.assign(partition, markerPosition: position)
            // Paused (already, above) until this assignment's fence and catch-up: `PartitionLifecycle`.
            _ = state.withLock { $0.lifecycle.assigned(partition, generation: generation) }
            context.markerIndex.expect(partition, generation: generation, committed: metadata)
            // The fence first: the catch-up then reads every marker a previous owner wrote before
            // it (reconciled, never called again), and that owner calls after it no more.
            fence(partition, generation: generation, groupGeneration: groupGeneration, attempt: 1) { [self] stamp in
                readMarkers(partition, from: position, generation: generation, stamp: stamp)
            }
        }
        exportPaused()
        context.logger.info("partitions assigned", [("partitions", .string(requests.map { String($0.partition) }.joined(separator: ",")))])
        updateShare()
    }

    /// Recomputes this worker's share of the group-wide program limits from the partitions it
    /// owns now and the topic's partition count (metadata; the last count known when it cannot
    /// be read, and the owned count as the whole before any is known).
    /// `leaving`: partitions being revoked, no longer counted (their drain starts no new call).
    /// The partition count is the one last read (at start, then every 5 s off the poll thread):
    /// a rebalance callback makes no metadata request.
    func updateShare(leaving: [TopicPartition] = []) {
        let topic = context.configuration.topics.requests
        let (owned, total) = state.withLock { state -> (Int, Int?) in
            (state.lifecycle.assigned.subtracting(leaving).count, state.totalPartitions)
        }
        if total == nil {
            context.logger.warning("requests topic partition count unknown: limits are shared as if this worker owned the whole topic",
                                   [("topic", .string(topic))])
        }
        let share = LimitShare(owned: owned, total: total ?? owned)
        flow.scheduler.setShare(share)
        context.logger.info("share of the group-wide program limits", [("owned", .integer(Int64(share.owned))),
                                                                       ("total", .integer(Int64(share.total)))])
    }

    /// Reads the markers of a newly assigned partition (after its fence) and marks it ready.
    /// An assignment is stale when the catch-up finds another process's newer fence (a newer group
    /// generation, or another group's fence written after this one's: `InheritedMarkers.newerOwner`):
    /// this process's own fence (stamped `stamp`) landed late, after the partition was given to
    /// that process. It never runs: the partition stays paused (its records refused by the gate)
    /// until the group takes it back.
    func readMarkers(_ partition: TopicPartition, from position: Int64?, generation: UInt64, stamp: FenceStamp) {
        let ledger = context.ledger
        let horizon = context.horizon
        let clock = context.clock
        catchUp.read(partition: partition.partition, from: position, horizon: horizon.read(partition, nowMs: clock()),
                     answers: { horizon.add($0, nowMs: clock()) },
                     while: { ledger.isOwned(partition, generation: generation) }) { [self] found, horizonReadThrough in
            var own = stamp
            if context.mutations.fencesAcrossGroups { own.group = nil }
            if !context.mutations.staleUnchecked, let newer = found.newerOwner(than: own, instance: context.fencing.instance) {
                context.metrics.markers.staleAssignments.increment()
                context.logger.warning("another process's fence of a newer group generation precedes this assignment's: the partition was given to it after this one; not run here",
                                       [("partition", .integer(Int64(partition.partition))), ("fence", .integer(newer.offset)),
                                        ("generation", .integer(Int64(newer.stamp.generation ?? -1))), ("own_generation", .integer(Int64(stamp.generation ?? -1)))])
                return
            }
            // A read of an earlier assignment ending late must not make this one ready.
            guard context.markerIndex.install(partition, generation: generation, found: found, readFrom: position ?? 0) else { return }
            if let horizonReadThrough, ledger.isHeld(partition, generation: generation) {
                horizon.install(partition, readThrough: horizonReadThrough)
            }
            context.ledger.inherit(partition, markerOffsets: found.markerOffsets, pin: found.firstUndecodable, generation: generation)
            if !found.states.isEmpty || found.undecodable > 0 || found.fencedOut > 0 {
                context.logger.info("marker catch-up found calls from a previous owner",
                                    [("partition", .integer(Int64(partition.partition))), ("markers", .integer(Int64(found.states.count))),
                                     ("undecodable", .integer(Int64(found.undecodable))), ("fenced_out", .integer(Int64(found.fencedOut)))])
            }
            // Atomic with the generation check: a catch-up of an earlier assignment makes nothing run.
            if state.withLock({ $0.lifecycle.caughtUp(partition, generation: generation) }) {
                context.probe?.caughtUp(worker: context.configuration.workerID, partition: partition, generation: generation)
            }
        }
    }

    /// Writes this owner's fence in the partition's markers partition (`MarkerFence`), then runs
    /// `then` with its stamp: its offset is the epoch every later `started` marker carries (see
    /// `MarkerFencing`). The partition stays paused meanwhile; a failed write is retried while the
    /// partition is owned.
    func fence(_ partition: TopicPartition, generation: UInt64, groupGeneration: Int32?, attempt: Int,
               then: @escaping @Sendable (FenceStamp) -> Void) {
        guard context.ledger.isOwned(partition, generation: generation) else { return }
        let record = MarkerFence(worker: context.configuration.workerID, atMs: context.clock(), instance: context.fencing.instance,
                                 generation: groupGeneration, group: context.configuration.consumerGroup)
        context.fencing.writing(partition.partition)
        context.publisher.publish([record.message(topic: context.configuration.topics.markers, partition: partition.partition)]) { [self] outcome in
            guard let epoch = outcome.reports.first??.offset else {
                context.fencing.written(partition.partition, offset: nil)
                context.logger.warning("fence not written; the partition stays paused and the write is retried",
                                       [("partition", .integer(Int64(partition.partition))), ("attempt", .integer(Int64(attempt))),
                                        ("error", .string(outcome.lastError?.description ?? "unknown"))])
                context.executor.pool.asyncAfter(milliseconds: Int64(min(2_000, 100 << min(attempt, 5)))) { [self] in
                    fence(partition, generation: generation, groupGeneration: groupGeneration, attempt: attempt + 1, then: then)
                }
                return
            }
            if context.ledger.isOwned(partition, generation: generation) {
                var stamp = record.stamp
                if context.mutations.lateFenceAcrossGroups { stamp.group = nil }
                if context.mutations.fencesByOffset { (stamp.group, stamp.generation) = (nil, nil) }
                context.fencing.fenced(partition.partition, at: epoch, generation: generation, stamp: stamp)
            }
            context.fencing.written(partition.partition, offset: epoch)
            guard context.ledger.isOwned(partition, generation: generation),
                  state.withLock({ $0.lifecycle.fenced(partition, generation: generation, epoch: epoch) }) else { return }
            then(record.stamp)
        }
    }

    /// Partitions revoked (inside `poll`): no new work for them, their queued jobs given back, the
    /// share dropped at once (their next owner may be assigned them soon after), and the revoke
    /// deferred while their work drains: `finishRevoke` gives them up. Inside `close` (the stop's
    /// own drain has run already) they are given up at once.
    func revoked(_ partitions: [TopicPartition]) -> KafkaRevokeCompletion {
        let requests = partitions.filter { $0.topic == context.configuration.topics.requests }
        guard !requests.isEmpty else { return .now }
        let closing = loop.isClosing
        let deadlineMs = context.clock() + (closing ? 0 : context.configuration.revokeDrainMs)
        let action = state.withLock { $0.lifecycle.revoked(requests, deadlineMs: deadlineMs) }
        if !closing { carryOut(action) }
        context.ledger.revoke(requests)
        flow.giveBack(requests)
        updateShare(leaving: requests)
        context.logger.info("partitions revoked: draining", [("partitions", .string(Self.names(requests))),
                                                             ("unsettled", .integer(Int64(context.ledger.unsettledCount(requests))))])
        guard closing else { return .deferred }
        finishRevoke(all: true)
        return .now
    }

    /// Ends the revoke that is draining when its partitions settled or its bound passed (`all`:
    /// now, whatever is left: the loop ends): commit, release, give them up (poll thread).
    func finishRevoke(all: Bool) {
        let now = context.clock()
        let ledger = context.ledger
        let due = state.withLock { state in
            all ? state.lifecycle.takeRevoke() : state.lifecycle.finishRevoke(nowMs: now) { ledger.unsettledCount($0) }
        }
        guard let due, !due.isEmpty else { return }
        let remaining = ledger.unsettledCount(due)
        loop.finishRevoke(due, nowMs: context.clock()) { release($0) }
        context.logger.info("partitions revoked", [("partitions", .string(Self.names(due))), ("unfinished", .integer(Int64(remaining)))])
    }

    func lost(_ partitions: [TopicPartition]) {
        let requests = partitions.filter { $0.topic == context.configuration.topics.requests }
        guard !requests.isEmpty else { return }
        state.withLock { $0.lifecycle.lost(requests) }
        context.ledger.revoke(requests)
        flow.giveBack(requests)
        release(requests)
        updateShare()
        context.logger.warning("partitions lost; nothing committed for them", [("partitions", .string(Self.names(requests)))])
    }

    /// Partition numbers for a log line.
    static func names(_ partitions: [TopicPartition]) -> String {
        partitions.map { String($0.partition) }.joined(separator: ",")
    }

    func release(_ partitions: [TopicPartition]) {
        context.ledger.release(partitions)
        for partition in partitions { context.fencing.release(partition.partition) }
        context.markerIndex.remove(partitions)
        context.horizon.remove(partitions, nowMs: context.clock())
        flow.forget(partitions)
        state.withLock { $0.lifecycle.released(partitions) }
        exportPaused()
    }
}
