import Contract
import Foundation
import Kafka
import Observability
import Recovery
import Synchronization

/// Rebalances of the reconciliation group (poll thread): an assignment resumes partitions
/// librdkafka kept paused; a revoke drops held jobs and is deferred while running queries drain
/// (the poll thread goes on), then commits and gives the partitions up; a loss commits nothing.
extension ReconcileRunner {
    // MARK: - Rebalance (poll thread)

    func assigned(_ partitions: [TopicPartition]) {
        for partition in partitions { _ = ledger.assign(partition, markerPosition: nil) }
        let resume = state.withLock { state -> [TopicPartition] in
            let resume = state.libraryPaused.intersection(partitions)
            state.libraryPaused.subtract(resume)
            return Array(resume)
        }
        // librdkafka keeps a partition's pause across a revoke and a new assignment: one paused at
        // the hold limit before the rebalance would never be fetched again.
        if !resume.isEmpty { consumer.resume(resume) }
        context.logger.info("reconciliation partitions assigned",
                            [("partitions", .string(Self.names(partitions))), ("resumed", .string(Self.names(resume)))])
    }

    /// Partitions revoked (inside `poll`): held jobs dropped (redelivered to the next owner), the
    /// revoke deferred while running queries end (`finishRevoke`); at once inside `close`.
    func revoked(_ partitions: [TopicPartition]) -> KafkaRevokeCompletion {
        let dropped = stopHolding(partitions)
        context.logger.info("reconciliation partitions revoked: draining",
                            [("partitions", .string(Self.names(partitions))), ("held_dropped", .integer(Int64(dropped)))])
        let closing = loop.isClosing
        state.withLock { $0.drain.begin(partitions, deadlineMs: context.clock() + (closing ? 0 : context.configuration.revokeDrainMs)) }
        guard closing else { return .deferred }
        finishRevoke(all: true)
        return .now
    }

    /// Partitions lost: held jobs dropped, nothing committed, released at once.
    func lost(_ partitions: [TopicPartition]) {
        let dropped = stopHolding(partitions)
        state.withLock { $0.drain.forget(partitions) }
        ledger.release(partitions)
        context.logger.info("reconciliation partitions lost", [("partitions", .string(Self.names(partitions))), ("held_dropped", .integer(Int64(dropped)))])
    }

    /// Ends the draining revoke once its running queries ended or its bound passed (`all`: now):
    /// commit, release, give the partitions up (poll thread).
    func finishRevoke(all: Bool) {
        let now = context.clock()
        let ledger = self.ledger
        let due = state.withLock { state in
            all ? state.drain.takeAll() : state.drain.due(nowMs: now) { ledger.unsettledCount($0) }
        }
        guard let due, !due.isEmpty else { return }
        loop.finishRevoke(due, nowMs: context.clock()) { ledger.release($0) }
        context.logger.info("reconciliation partitions given up", [("partitions", .string(Self.names(due)))])
    }

    /// No new work for `partitions`: the ledger stops taking them, held jobs are dropped (abandoned:
    /// redelivered to the next owner, nobody waits for them), pauses forgotten. How many were dropped.
    private func stopHolding(_ partitions: [TopicPartition]) -> Int {
        let gone = Set(partitions)
        ledger.revoke(partitions)
        let (dropped, wasPaused) = state.withLock { state -> ([Held], Set<TopicPartition>) in
            let dropped = state.held.removeAll { gone.contains($0.partition) }
            for partition in partitions {
                state.heldPerPartition[partition] = nil
                state.rewinds[partition] = nil
            }
            state.paused.subtract(gone)
            state.resumeWanted.subtract(gone)
            // Still paused in librdkafka (resumed when assigned again), but no longer this worker's to show.
            return (dropped, state.libraryPaused.intersection(gone))
        }
        for held in dropped { ledger.abandon(held.partition, offset: held.offset, generation: held.generation) }
        for partition in wasPaused { context.metrics.setPartitionPaused(partition, false) }
        return dropped.count
    }
}
