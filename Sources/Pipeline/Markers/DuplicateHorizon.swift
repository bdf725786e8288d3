import Contract
import Kafka
import Synchronization

/// Requests (identities) answered within the duplicate horizon, per owned requests partition: what makes a
/// copy of an answered request a duplicate on any worker that owns its partition, after restarts
/// and rebalances. Filled by marker catch-up from the horizon (`MarkerCatchUp.HorizonRead`) when
/// the partition is assigned, then by this worker's own `completed` markers. A released
/// partition's index is kept (until its newest answer could still count: one horizon) with the
/// markers offset it is complete up to, so that this process's next assignment of the partition
/// (an eager rebalance gives every partition back and takes most of them again) reads only the
/// markers written since instead of the whole horizon. Each partition's index is bounded
/// (`duplicates.max_entries_per_partition`).
final class DuplicateHorizon: Sendable {
    private struct State {
        var partitions: [TopicPartition: MarkerCatchUp.HorizonIndex] = [:]
        /// Indexes of released partitions and when they were released (epoch ms).
        var kept: [TopicPartition: (index: MarkerCatchUp.HorizonIndex, releasedAtMs: Int64)] = [:]
        /// Evictions counted by indexes of partitions since released.
        var evictedReleased = 0

        /// Drops kept indexes none of whose answers can count any more.
        mutating func expire(nowMs: Int64, horizonMs: Int64) {
            kept = kept.filter { $0.value.releasedAtMs + horizonMs > nowMs }
        }
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

    /// What catch-up of `partition` assigned at `nowMs` must read: the horizon, or only what
    /// follows the index kept from this process's earlier assignment of it.
    func read(_ partition: TopicPartition, nowMs: Int64) -> MarkerCatchUp.HorizonRead {
        let kept = state.withLock { state in
            state.expire(nowMs: nowMs, horizonMs: horizonMs)
            return state.kept[partition]?.index
        }
        return .init(sinceMs: nowMs - horizonMs, horizonMs: horizonMs, maxEntries: maxEntriesPerPartition, nowMs: nowMs, kept: kept)
    }

    /// Installs the index catch-up built for `partition` (its current assignment's read).
    func install(_ partition: TopicPartition, index: MarkerCatchUp.HorizonIndex) {
        state.withLock { state in
            if let old = state.partitions[partition] { state.evictedReleased += old.answered.evictedBeforeHorizon }
            state.kept[partition] = nil
            state.partitions[partition] = index
        }
    }

    /// This worker answered request `identity` in `partition` at `answeredAtMs` (its `completed`
    /// marker was written); ignored for a partition not (or no longer) indexed here.
    func record(_ identity: RequestIdentity, in partition: TopicPartition, answeredAtMs: Int64, nowMs: Int64) {
        let fingerprint = AnsweredIndex.Fingerprint(identity)
        state.withLock { state in
            guard state.partitions[partition] != nil else { return }
            state.partitions[partition]!.answered.insert(fingerprint, expiresAtMs: answeredAtMs + horizonMs, nowMs: nowMs)
        }
    }

    /// Whether request `identity` was answered in `partition` within the horizon: by its identity,
    /// or by its request id alone when an earlier version (which recorded no program) answered it.
    func contains(_ identity: RequestIdentity, in partition: TopicPartition, nowMs: Int64) -> Bool {
        let fingerprint = AnsweredIndex.Fingerprint(identity)
        let legacy = AnsweredIndex.Fingerprint(program: nil, requestID: identity.requestID)
        return state.withLock { state in
            guard let index = state.partitions[partition]?.answered else { return false }
            return index.contains(fingerprint, nowMs: nowMs) || index.contains(legacy, nowMs: nowMs)
        }
    }

    /// Partitions no longer owned (released at `nowMs`): their indexes are kept for a later
    /// assignment of the same partitions (`read`), none of them answering `contains` meanwhile.
    func remove(_ partitions: [TopicPartition], nowMs: Int64) {
        state.withLock { state in
            state.expire(nowMs: nowMs, horizonMs: horizonMs)
            for partition in partitions {
                guard let old = state.partitions.removeValue(forKey: partition) else { continue }
                state.evictedReleased += old.answered.evictedBeforeHorizon
                state.kept[partition] = (old, nowMs)
            }
        }
    }

    /// Ids held over the partitions owned now (metrics).
    var count: Int { state.withLock { $0.partitions.values.reduce(0) { $0 + $1.answered.count } } }

    /// Bytes the indexes hold allocated, the kept ones included (metrics).
    var allocatedBytes: Int {
        state.withLock { state in
            state.partitions.values.reduce(0) { $0 + $1.answered.allocatedBytes } + state.kept.values.reduce(0) { $0 + $1.index.answered.allocatedBytes }
        }
    }

    /// Indexes kept for released partitions.
    var keptCount: Int { state.withLock { $0.kept.count } }

    /// Ids pushed out by the bound before their horizon ended, since the worker started (metrics).
    var evictedBeforeHorizon: Int {
        state.withLock { state in state.evictedReleased + state.partitions.values.reduce(0) { $0 + $1.answered.evictedBeforeHorizon } }
    }
}
