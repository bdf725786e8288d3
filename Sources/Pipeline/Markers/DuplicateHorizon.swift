import Contract
import Kafka
import Synchronization

/// Requests (identities) answered within the duplicate horizon, per owned requests partition: what makes a
/// copy of an answered request a duplicate on any worker that owns its partition, after restarts
/// and rebalances. Filled by marker catch-up from the horizon (`MarkerCatchUp.HorizonRead`) when
/// the partition is assigned, then by this worker's own `completed` markers; dropped with the
/// partition. Each partition's index is bounded (`duplicates.max_entries_per_partition`).
final class DuplicateHorizon: Sendable {
    private struct State {
        var partitions: [TopicPartition: AnsweredIndex] = [:]
        /// Evictions counted by indexes of partitions since released.
        var evictedReleased = 0
    }

    /// How long an answer counts.
    let horizonMs: Int64
    /// Bound of each partition's index.
    let maxEntriesPerPartition: Int
    private let state = Mutex(State())

    init(horizonMs: Int64, maxEntriesPerPartition: Int) {
        self.horizonMs = horizonMs
        self.maxEntriesPerPartition = maxEntriesPerPartition
    }

    /// What catch-up of a partition assigned at `nowMs` must read.
    func read(nowMs: Int64) -> MarkerCatchUp.HorizonRead {
        .init(sinceMs: nowMs - horizonMs, horizonMs: horizonMs, maxEntries: maxEntriesPerPartition, nowMs: nowMs)
    }

    /// Installs the index catch-up built for `partition` (its current assignment's read).
    func install(_ partition: TopicPartition, index: AnsweredIndex) {
        state.withLock { state in
            if let old = state.partitions[partition] { state.evictedReleased += old.evictedBeforeHorizon }
            state.partitions[partition] = index
        }
    }

    /// This worker answered request `identity` in `partition` at `answeredAtMs` (its `completed`
    /// marker was written); ignored for a partition not (or no longer) indexed here.
    func record(_ identity: RequestIdentity, in partition: TopicPartition, answeredAtMs: Int64, nowMs: Int64) {
        let fingerprint = AnsweredIndex.Fingerprint(identity)
        state.withLock { state in
            guard state.partitions[partition] != nil else { return }
            state.partitions[partition]!.insert(fingerprint, expiresAtMs: answeredAtMs + horizonMs, nowMs: nowMs)
        }
    }

    /// Whether request `identity` was answered in `partition` within the horizon: by its identity,
    /// or by its request id alone when an earlier version (which recorded no program) answered it.
    func contains(_ identity: RequestIdentity, in partition: TopicPartition, nowMs: Int64) -> Bool {
        let fingerprint = AnsweredIndex.Fingerprint(identity)
        let legacy = AnsweredIndex.Fingerprint(program: nil, requestID: identity.requestID)
        return state.withLock { state in
            guard let index = state.partitions[partition] else { return false }
            return index.contains(fingerprint, nowMs: nowMs) || index.contains(legacy, nowMs: nowMs)
        }
    }

    /// Forgets partitions no longer owned.
    func remove(_ partitions: [TopicPartition]) {
        state.withLock { state in
            for partition in partitions {
                if let old = state.partitions.removeValue(forKey: partition) { state.evictedReleased += old.evictedBeforeHorizon }
            }
        }
    }

    /// Ids held over every partition (metrics).
    var count: Int { state.withLock { $0.partitions.values.reduce(0) { $0 + $1.count } } }

    /// Bytes the indexes hold allocated (metrics).
    var allocatedBytes: Int { state.withLock { $0.partitions.values.reduce(0) { $0 + $1.allocatedBytes } } }

    /// Ids pushed out by the bound before their horizon ended, since the worker started (metrics).
    var evictedBeforeHorizon: Int {
        state.withLock { state in state.evictedReleased + state.partitions.values.reduce(0) { $0 + $1.evictedBeforeHorizon } }
    }
}
