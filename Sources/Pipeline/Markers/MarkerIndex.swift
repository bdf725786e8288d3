import Contract
import Kafka
import Recovery
import Synchronization

/// Markers found by catch-up when a partition was assigned: marker key → latest state, the
/// requests named by markers that could not be read, and the markers offset the read started
/// from. Consulted for every request of that partition before it is admitted.
final class MarkerIndex: Sendable {
    private struct Entry {
        var found: InheritedMarkers
        var readFrom: Int64
    }

    private let entries = Mutex<[TopicPartition: Entry]>([:])
    /// The ledger generation of each partition's current assignment: the only catch-up accepted.
    private let awaited = Mutex<[TopicPartition: UInt64]>([:])
    /// Offsets past the committed one that the previous owner's commit said were done.
    private let done = Mutex<[TopicPartition: CommitMetadata]>([:])

    /// `partition` was assigned as ledger generation `generation`: only its own catch-up counts.
    /// `committed`: the metadata of the commit it starts from (its `done` offsets were answered).
    func expect(_ partition: TopicPartition, generation: UInt64, committed: CommitMetadata = CommitMetadata(parsing: nil)) {
        awaited.withLock { $0[partition] = generation }
        done.withLock { $0[partition] = committed }
    }

    /// Whether the commit this assignment started from said the record at `offset` was done
    /// (answered, its result acknowledged): a decision read for it need not be published again.
    func wasDone(_ offset: Int64, in partition: TopicPartition) -> Bool {
        done.withLock { $0[partition]?.isDone(offset) ?? false }
    }

    /// Installs what catch-up found for `partition` (the requests partition), read from markers
    /// offset `readFrom` (0: the partition's start), when it belongs to the current assignment;
    /// false (nothing installed) for a stale read of an earlier assignment: the partition must
    /// stay paused until its own read ends.
    func install(_ partition: TopicPartition, generation: UInt64, found: InheritedMarkers, readFrom: Int64) -> Bool {
        awaited.withLock { awaited in
            guard awaited[partition] == generation else { return false }
            entries.withLock { $0[partition] = Entry(found: found, readFrom: readFrom) }
            return true
        }
    }

    /// This owner is writing a `started` marker for `key` in `partition`: catch-up read the
    /// partition before it, so without this a later copy of the request in the same assignment
    /// (produced again after the original was dead-lettered or given up) would find no marker and
    /// call the issuer a second time with the same handshake. It reconciles instead. Recorded
    /// before the write is acknowledged: a write that fails may still have landed.
    func started(_ key: CallMarker.Key, in partition: TopicPartition) {
        // Mutated in place: an entry copied out and written back would copy its whole `states`
        // (every marker key of the assignment, one more per call) on every call.
        entries.withLock { entries in
            if entries[partition]?.found.states[key] != .completed { entries[partition]?.found.states[key] = .started }
        }
    }

    /// This process's `started` marker for `key` in `partition` was fenced out (a newer owner's
    /// fence came first): no call followed, and every reader ignores that marker. Forgotten, so a
    /// later copy of the request here tries to call (and is fenced out in turn) instead of
    /// reconciling a call that was never made: such a reconciliation, not fenced itself, would
    /// decide a final beside the new owner's. Only in the assignment that wrote it (ledger
    /// generation `generation`): a later assignment of the partition read its markers afresh, and
    /// there a `started` state for the key may be another owner's call, which must be reconciled,
    /// never made again.
    func fencedOut(_ key: CallMarker.Key, in partition: TopicPartition, generation: UInt64) {
        awaited.withLock { awaited in
            guard awaited[partition] == generation else { return }
            entries.withLock { entries in
                if entries[partition]?.found.states[key] == .started { entries[partition]?.found.states[key] = nil }
            }
        }
    }

    /// This owner wrote `key`'s decision (`encoded`) in `partition` and could not publish it (the
    /// request was dead-lettered): catch-up read the partition before it, so without this an
    /// operator's replay of that dead letter in the same assignment would not find the decision and
    /// would call the issuer again. Only publish failures come here, so it holds few results.
    func decidedUnpublished(_ key: CallMarker.Key, encoded: [UInt8], in partition: TopicPartition) {
        entries.withLock { entries in
            guard entries[partition] != nil, entries[partition]?.found.published.contains(key) != true else { return }
            entries[partition]?.found.decisions[key] = encoded
            entries[partition]?.found.states[key] = .completed
        }
    }

    /// Forgets a partition.
    func remove(_ partitions: [TopicPartition]) {
        awaited.withLock { awaited in
            entries.withLock { entries in
                for partition in partitions {
                    entries[partition] = nil
                    awaited[partition] = nil
                }
                done.withLock { done in for partition in partitions { done[partition] = nil } }
            }
        }
    }

    /// The marker state recorded for a marker key (`CallMarker.key`), if any (markers of an
    /// earlier version for its request id included: `InheritedMarkers.state(of:)`).
    func state(of key: CallMarker.Key, in partition: TopicPartition) -> CallMarker.State? {
        entries.withLock { $0[partition]?.found.state(of: key) }
    }

    /// What the markers say about request `identity` (or its replay of `replayOf`): its own
    /// markers' state (with an earlier version's for its request id); `started` when it has no
    /// `completed` marker but a marker that could not be read names its request id (that marker
    /// may have been its `started`, under any program: reconcile, never call).
    func state(_ identity: RequestIdentity, replayOf: String?, in partition: TopicPartition) -> CallMarker.State? {
        entries.withLock { entries in
            guard let found = entries[partition]?.found else { return nil }
            let state = found.state(of: CallMarker.key(identity, replayOf: replayOf))
            if state != .completed, found.mayHaveStarted.contains(identity.requestID) { return .started }
            return state
        }
    }

    /// The decided final result of request `identity` (or of its replay of `replayOf`), when
    /// catch-up read its decision (`CallMarker.isDecision`) and no marker after it said it was published.
    func decision(_ identity: RequestIdentity, replayOf: String?, in partition: TopicPartition) -> [UInt8]? {
        let key = CallMarker.key(identity, replayOf: replayOf)
        return entries.withLock { entries in
            guard let found = entries[partition]?.found, !found.published.contains(key) else { return nil }
            return found.decisions[key]
        }
    }

    /// The markers offset catch-up read `partition` from: every marker it found is at or after it.
    func readFrom(_ partition: TopicPartition) -> Int64? {
        entries.withLock { $0[partition]?.readFrom }
    }
}
