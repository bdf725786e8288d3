import Kafka
import Synchronization

/// Every owned partition's offsets: what was received, what is done, what was abandoned on a
/// revoke, and what may be committed (with the write-ahead marker position as commit metadata).
///
/// A partition's state carries a generation: work from before a revoke that completes after a
/// re-assignment is ignored, so it can never move the new generation's commit position.
final class OffsetLedger: Sendable {
    struct Partition: Sendable {
        var generation: UInt64
        var owned = true
        var tracker = PartitionOffsetTracker()
        var abandoned = 0
        var lastCommitted: Int64?
        /// Request offset → offset of its earliest marker, for requests not yet committed: this
        /// generation's own markers and those a previous owner left (read by catch-up).
        var markerOffsets: [Int64: Int64] = [:]
        /// Request offsets whose `started` marker is written but not yet acknowledged.
        var pendingMarkers: Set<Int64> = []
        var lastAckedMarkerOffset: Int64?
        /// Marker position carried in the last commit metadata (from the assignment at first).
        var markerPosition: Int64?
        /// The done offsets past the committed one that the last commit said (`CommitMetadata.done`).
        var lastCommittedDone: [ClosedRange<Int64>] = []
        /// A marker offset the commit metadata never moves past in this generation: the first
        /// undecodable marker catch-up read, whose request (and so its commit) is unknown.
        var pinnedMarkerPosition: Int64?
    }

    private let state = Mutex<(partitions: [TopicPartition: Partition], nextGeneration: UInt64)>(([:], 1))

    /// Starts a new generation for a newly assigned partition.
    func assign(_ partition: TopicPartition, markerPosition: Int64?) -> UInt64 {
        state.withLock { state in
            let generation = state.nextGeneration
            state.nextGeneration += 1
            var entry = Partition(generation: generation)
            entry.markerPosition = markerPosition
            state.partitions[partition] = entry
            return generation
        }
    }

    /// Stops new work for the partitions; their state stays until `release`.
    func revoke(_ partitions: [TopicPartition]) {
        state.withLock { state in
            for partition in partitions { state.partitions[partition]?.owned = false }
        }
    }

    /// Forgets the partitions.
    func release(_ partitions: [TopicPartition]) {
        state.withLock { state in
            for partition in partitions { state.partitions[partition] = nil }
        }
    }

    /// Records a received offset; returns its generation, or nil when the record must not be
    /// handled: the partition is not owned, or this generation already received the offset (the
    /// consumer fetched it again after a pause/resume; the first copy is handled and completes it).
    func track(_ partition: TopicPartition, offset: Int64) -> UInt64? {
        state.withLock { state in
            state.partitions.mutate(partition) { entry -> UInt64? in
                guard entry.owned, entry.tracker.track(offset) else { return nil }
                return entry.generation
            } ?? nil
        }
    }

    /// Whether `track` would record the offset now (the partition is owned and this generation has
    /// not received it), without recording it: a loop that may still refuse the record asks first.
    func accepts(_ partition: TopicPartition, offset: Int64) -> Bool {
        state.withLock { state in
            guard let entry = state.partitions[partition] else { return false }
            return entry.owned && entry.tracker.accepts(offset)
        }
    }

    /// Whether the partition is assigned (owned, or revoked and not yet released).
    func holds(_ partition: TopicPartition) -> Bool {
        state.withLock { $0.partitions[partition] != nil }
    }

    /// Whether new work may start for this partition and generation.
    func isOwned(_ partition: TopicPartition, generation: UInt64) -> Bool {
        state.withLock { state in
            guard let entry = state.partitions[partition] else { return false }
            return entry.owned && entry.generation == generation
        }
    }

    /// Whether this generation of the partition is still held: owned, or revoked and still draining
    /// (not yet released). Work already under way may go on only while it is held.
    func isHeld(_ partition: TopicPartition, generation: UInt64) -> Bool {
        state.withLock { $0.partitions[partition]?.generation == generation }
    }

    /// Marks an offset done (its outputs are acknowledged by Kafka).
    func complete(_ partition: TopicPartition, offset: Int64, generation: UInt64) {
        state.withLock { state in
            state.partitions.mutate(partition) { entry in
                guard entry.generation == generation else { return }
                entry.tracker.complete(offset)
            }
        }
    }

    /// Marks an offset given up because its partition was revoked: it is not done and will be
    /// redelivered to the next owner, but nobody waits for it any more.
    func abandon(_ partition: TopicPartition, offset: Int64, generation: UInt64) {
        state.withLock { state in
            state.partitions.mutate(partition) { entry in
                guard entry.generation == generation else { return }
                entry.abandoned += 1
            }
        }
    }

    /// A marker (`started`, or `completed`) for `requestOffset` is being written.
    func markerWriting(_ partition: TopicPartition, requestOffset: Int64, generation: UInt64) {
        state.withLock { state in
            state.partitions.mutate(partition) { entry in
                guard entry.generation == generation else { return }
                entry.pendingMarkers.insert(requestOffset)
            }
        }
    }

    /// Markers a previous owner left in this partition (request offset → earliest marker offset),
    /// as catch-up read them: until their requests are committed, the commit metadata keeps
    /// pointing at them, so a third owner still finds them.
    /// `pin`: the first undecodable marker read, which the metadata never moves past.
    func inherit(_ partition: TopicPartition, markerOffsets: [Int64: Int64], pin: Int64? = nil, generation: UInt64) {
        state.withLock { state in
            state.partitions.mutate(partition) { entry in
                guard entry.generation == generation else { return }
                if let pin { entry.pinnedMarkerPosition = min(entry.pinnedMarkerPosition ?? pin, pin) }
                let committed = entry.lastCommitted ?? .min
                for (requestOffset, markerOffset) in markerOffsets where requestOffset >= committed {
                    entry.markerOffsets[requestOffset] = min(entry.markerOffsets[requestOffset] ?? markerOffset, markerOffset)
                }
            }
        }
    }

    /// The marker for `requestOffset` is acknowledged at `markerOffset` (nil: it failed); the
    /// request's earliest marker counts in the commit metadata.
    func markerWritten(_ partition: TopicPartition, requestOffset: Int64, markerOffset: Int64?, generation: UInt64) {
        state.withLock { state in
            state.partitions.mutate(partition) { entry in
                guard entry.generation == generation else { return }
                entry.pendingMarkers.remove(requestOffset)
                if let markerOffset {
                    entry.markerOffsets[requestOffset] = min(entry.markerOffsets[requestOffset] ?? markerOffset, markerOffset)
                    entry.lastAckedMarkerOffset = max(entry.lastAckedMarkerOffset ?? markerOffset, markerOffset)
                }
            }
        }
    }

    /// Offsets tracked and neither done nor abandoned, over `partitions` (all when nil).
    func unsettledCount(_ partitions: [TopicPartition]? = nil) -> Int {
        state.withLock { state in
            state.partitions.reduce(0) { total, item in
                guard partitions == nil || partitions!.contains(item.key) else { return total }
                return total + max(0, item.value.tracker.pendingCount - item.value.abandoned)
            }
        }
    }

    /// Offsets that may be committed now and were not committed yet, with their `CommitMetadata`
    /// (the marker position, and the offsets already done past the committed one), over
    /// `partitions` (all held when nil). A partition whose offset did not move is committed again
    /// when more offsets past it are done (its first offset not done is committed, with them).
    func commitCandidates(_ partitions: [TopicPartition]? = nil) -> [TopicPartitionOffset] {
        state.withLock { state in
            var result: [TopicPartitionOffset] = []
            for (partition, entry) in state.partitions where partitions == nil || partitions!.contains(partition) {
                let done = entry.tracker.completedBeyondFrontier(limit: CommitMetadata.maxRanges)
                guard let offset = entry.tracker.committableOffset ?? (done.isEmpty ? nil : entry.tracker.firstPending),
                      offset != entry.lastCommitted || done != entry.lastCommittedDone else { continue }
                let metadata = CommitMetadata(markers: Self.markerPosition(entry, committing: offset), done: done)
                result.append(TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: offset,
                                                   metadata: metadata.encoded))
            }
            return result
        }
    }

    /// Records that `offsets` were committed.
    func committed(_ offsets: [TopicPartitionOffset]) {
        state.withLock { state in
            for item in offsets {
                let partition = TopicPartition(topic: item.topic, partition: item.partition)
                state.partitions.mutate(partition) { entry in
                    entry.lastCommitted = item.offset
                    entry.lastCommittedDone = CommitMetadata(parsing: item.metadata).done
                    entry.markerPosition = Self.markerPosition(entry, committing: item.offset)
                    entry.markerOffsets = entry.markerOffsets.filter { $0.key >= item.offset }
                }
            }
        }
    }

    /// Owned partitions with their generation and the next offset that generation has not
    /// received (the last received plus one; nil before any): what `FetchWatchdog` watches.
    var receivedPositions: [TopicPartition: (generation: UInt64, next: Int64?, committed: Int64?)] {
        state.withLock { state in
            state.partitions.filter(\.value.owned).mapValues { entry in
                (entry.generation, entry.tracker.lastTracked.map { $0 + 1 }, entry.lastCommitted)
            }
        }
    }

    /// Owned partitions and the number of unsettled offsets in each (metrics).
    var snapshot: [TopicPartition: Int] {
        state.withLock { state in
            state.partitions.filter(\.value.owned).mapValues { max(0, $0.tracker.pendingCount - $0.abandoned) }
        }
    }

    /// The earliest marker offset a new owner must read to see every marker of a request at or
    /// after `committing`, this generation's own and those inherited from a previous owner.
    private static func markerPosition(_ entry: Partition, committing: Int64) -> Int64? {
        var candidates = entry.markerOffsets.filter { $0.key >= committing }.map(\.value)
        if let pinned = entry.pinnedMarkerPosition { candidates.append(pinned) }
        if entry.pendingMarkers.contains(where: { $0 >= committing }), let last = entry.lastAckedMarkerOffset {
            candidates.append(last + 1)
        }
        if let lowest = candidates.min() { return lowest }
        if let last = entry.lastAckedMarkerOffset { return last + 1 }
        return entry.markerPosition
    }

}
