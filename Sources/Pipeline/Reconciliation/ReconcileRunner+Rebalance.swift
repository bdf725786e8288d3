import Contract
import Dispatch
import Foundation
import Kafka
import Observability
import Recovery
import Synchronization

/// Rebalances of the reconciliation group (poll thread): an assignment resumes partitions
/// librdkafka kept paused; a revoke drops held jobs, drains running queries and commits; a loss
/// commits nothing.
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

    func revoked(_ partitions: [TopicPartition], commit: Bool) {
        let gone = Set(partitions)
        ledger.revoke(partitions)
        let (dropped, wasPaused) = state.withLock { state -> ([Held], Set<TopicPartition>) in
            let dropped = state.held.removeAll { gone.contains($0.partition) }
            for partition in partitions { state.heldPerPartition[partition] = nil }
            state.paused.subtract(gone)
            state.resumeWanted.subtract(gone)
            // Still paused in librdkafka (resumed when assigned again), but no longer this worker's to show.
            return (dropped, state.libraryPaused.intersection(gone))
        }
        // Held, never run: redelivered to the next owner, so nobody waits for them.
        for held in dropped { ledger.abandon(held.partition, offset: held.offset, generation: held.generation) }
        for partition in wasPaused { context.metrics.setPartitionPaused(partition, false) }
        context.logger.info(commit ? "reconciliation partitions revoked" : "reconciliation partitions lost",
                            [("partitions", .string(Self.names(partitions))), ("held_dropped", .integer(Int64(dropped.count)))])
        if commit {
            // The partitions' running queries end (or the bound passes), then what is done is committed.
            // (Inside `close` the stop's own drain has run already: no second one.)
            _ = ledger.waitUntilSettled(partitions, timeoutMs: loop.isClosing ? 0 : context.configuration.revokeDrainMs)
            loop.commitNow(partitions)
        }
        ledger.release(partitions)
    }
}
