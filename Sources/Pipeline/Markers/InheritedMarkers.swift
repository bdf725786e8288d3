import Recovery

/// What a marker catch-up found in a markers partition: the latest state per marker key (for the
/// duplicate and reconcile decisions) and, per request offset, the earliest marker offset seen for
/// that request (for the commit metadata: a new owner must not commit a marker position that
/// skips a previous owner's marker of a request it has not committed yet).
///
/// Keys are request identities (`CallMarker.Key`); a marker of an earlier version has a key
/// without a program, which `state(of:)` applies to the request id under every program.
struct InheritedMarkers: Sendable, Equatable {
    /// Marker key (`CallMarker.key`) → latest state (`completed` wins).
    var states: [CallMarker.Key: CallMarker.State] = [:]
    /// Marker key → the first decision read for it (`CallMarker.isDecision`): the request's final
    /// result, published again as it is when the request is redelivered, unless `published`.
    var decisions: [CallMarker.Key: [UInt8]] = [:]
    /// Marker keys whose decision is followed by a plain `completed` marker: the decided result
    /// was acknowledged, so a redelivery is a duplicate like any answered request.
    var published: Set<CallMarker.Key> = []
    /// Request offset → offset of the earliest marker (started or completed) read for it.
    var markerOffsets: [Int64: Int64] = [:]
    /// Requests named (by their Kafka key) by a marker whose value could not be read: whatever
    /// their marker key, their call may have started.
    var mayHaveStarted: Set<String> = []
    /// Markers whose value could not be read (with or without a usable key).
    var undecodable = 0
    /// The offset of the first of them: the commit metadata may not move past it while this
    /// assignment lasts (its request, and so when it is committed, is unknown).
    var firstUndecodable: Int64?
    /// The owners' fences (`MarkerFence`) read: offset and writing process.
    var fences: [Fence] = []

    /// A fence read: its offset, the process that wrote it and what the fencing rule compares of it.
    struct Fence: Sendable, Equatable {
        var offset: Int64
        var instance: String
        var stamp: FenceStamp

        /// The fence as read at `offset`.
        init(offset: Int64, instance: String, generation: Int32? = nil, group: String? = nil, atMs: Int64? = nil) {
            self.offset = offset
            self.instance = instance
            stamp = FenceStamp(generation: generation, group: group, atMs: atMs)
        }

        /// `fence` as read at `offset`.
        init(offset: Int64, _ fence: MarkerFence) {
            self.init(offset: offset, instance: fence.instance, generation: fence.generation, group: fence.group, atMs: fence.atMs)
        }
    }

    /// Nothing found.
    init() {}

    /// `started` markers (and decisions without a call) ignored because their writer had been
    /// fenced out before writing them (another process's newer fence lies between its epoch and
    /// the marker, `FenceLog`): it never called (or never published).
    var fencedOut = 0

    /// A fence of another process among those read that is newer than this assignment's own
    /// (stamped `own`, `MarkerFence.isNewer`): the partition was given to that process after this
    /// assignment, whose own fence landed late (after it). Within one group a newer generation
    /// is; a fence of another group (a renamed `group_id`, whose generations start again at 1; a
    /// second deployment) is when it was written after this one's own fence, whatever its
    /// generation; one without a group (an earlier version's) counts as this group's. Nil when
    /// there is none, or a number it needs is unknown.
    func newerOwner(than own: FenceStamp, instance: String) -> Fence? {
        fences.first { $0.instance != instance && MarkerFence.isNewer($0.stamp, than: own) }
    }

    /// Whether `marker` at `offset` was written by a fenced-out owner: another process's fence not
    /// older than the writer's own (`MarkerFence.supersedes`, the rule its writer applied) lies
    /// between the writer's epoch and the marker, so it did not act on it.
    func isFencedOut(_ marker: CallMarker, at offset: Int64) -> Bool {
        Self.isFencedOut(marker, at: offset, fences: fences)
    }

    /// `isFencedOut` over `fences` (every fence read before `offset`).
    static func isFencedOut(_ marker: CallMarker, at offset: Int64, fences: [Fence]) -> Bool {
        guard let epoch = marker.fence, let writer = marker.instance else { return false }
        return fences.contains { $0.offset > epoch && $0.offset < offset && $0.instance != writer
            && MarkerFence.supersedes($0.stamp, owner: marker.stamp) }
    }

    /// Whether a fenced-out writer's `marker` means nothing: a `started` marker (no call followed)
    /// or a decision without a call (never published; the new owner answers).
    static func countsOnlyIfNotFencedOut(_ marker: CallMarker) -> Bool {
        marker.state == .started || (marker.isDecision && marker.outcome == .answeredWithoutCall)
    }

    /// Records `marker`, read at markers offset `offset` (after every fence before it).
    mutating func add(_ marker: CallMarker, at offset: Int64) {
        if Self.countsOnlyIfNotFencedOut(marker), isFencedOut(marker, at: offset) {
            fencedOut += 1
            return
        }
        if states[marker.key] != .completed { states[marker.key] = marker.state }
        if marker.isDecision, decisions[marker.key] == nil {
            decisions[marker.key] = marker.result
        } else if marker.state == .completed, marker.result == nil, marker.outcome != .recovered {
            // An earlier version's plain `completed` (no program) follows a decision it attributed
            // by the decision's result: it says "published" for that decision's key.
            for key in decisions.keys where marker.key.speaks(for: key) { published.insert(key) }
        }
        markerOffsets[marker.requestOffset] = min(markerOffsets[marker.requestOffset] ?? offset, offset)
    }

    /// The state the markers give the request tracked by `key`: its own markers' and those of an
    /// earlier version for its request id (`CallMarker.Key.speaks(for:)`), `completed` winning.
    func state(of key: CallMarker.Key) -> CallMarker.State? {
        let own = states[key]
        guard own != .completed, key.program != nil, let legacy = states[key.legacy] else { return own }
        return legacy == .completed ? .completed : own ?? legacy
    }
}
