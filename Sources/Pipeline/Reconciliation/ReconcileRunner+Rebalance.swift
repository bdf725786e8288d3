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
        let resume = state.withLock { state -> [TopicPartition] in
            for partition in partitions {
                state.trackers[partition] = (PartitionOffsetTracker(), state.nextGeneration, nil)
                state.nextGeneration += 1
            }
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
        let (dropped, wasPaused) = state.withLock { state -> (Int, Set<TopicPartition>) in
            let dropped = state.held.removeAll { gone.contains($0.partition) }.count
            for partition in partitions { state.heldPerPartition[partition] = nil }
            state.paused.subtract(gone)
            state.resumeWanted.subtract(gone)
            // Still paused in librdkafka (resumed when assigned again), but no longer this worker's to show.
            return (dropped, state.libraryPaused.intersection(gone))
        }
        for partition in wasPaused { context.metrics.setPartitionPaused(partition, false) }
        context.logger.info(commit ? "reconciliation partitions revoked" : "reconciliation partitions lost",
                            [("partitions", .string(Self.names(partitions))), ("held_dropped", .integer(Int64(dropped)))])
        if commit {
            _ = queryEnded.wait(timeoutMs: context.configuration.revokeDrainMs) { state.withLock { $0.running == 0 } }
            commitIfDue(force: true)
        }
        state.withLock { state in
            for partition in partitions { state.trackers[partition] = nil }
        }
    }
}
