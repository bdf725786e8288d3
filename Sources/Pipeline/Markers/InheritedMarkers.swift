import Recovery

/// What a marker catch-up found in a markers partition: the latest state per marker key (for the
/// duplicate and reconcile decisions) and, per request offset, the earliest marker offset seen for
/// that request (for the commit metadata: a new owner must not commit a marker position that
/// skips a previous owner's marker of a request it has not committed yet).
struct InheritedMarkers: Sendable, Equatable {
    /// Marker key (`CallMarker.key`) → latest state (`completed` wins).
    var states: [String: CallMarker.State] = [:]
    /// Request offset → offset of the earliest marker (started or completed) read for it.
    var markerOffsets: [Int64: Int64] = [:]
    /// Requests named (by their Kafka key) by a marker whose value could not be read: whatever
    /// their marker key, their call may have started.
    var mayHaveStarted: Set<String> = []
    /// Markers whose value could not be read (with or without a usable key).
    var undecodable = 0
    /// Offsets of the owners' fences (`MarkerFence`) read.
    var fences: [Int64] = []
    /// The end offset the read reached (the next owner's fence goes at or after it).
    var readTo: Int64 = 0

    /// Nothing found.
    init() {}

    /// `started` markers ignored because their writer had been fenced out before writing them
    /// (a newer owner's fence lies between its epoch and the marker): it never called.
    var fencedOut = 0

    /// Records `marker`, read at markers offset `offset` (after every fence before it).
    mutating func add(_ marker: CallMarker, at offset: Int64) {
        if marker.state == .started, let writer = marker.fence, fences.contains(where: { $0 > writer && $0 < offset }) {
            fencedOut += 1
            return
        }
        if states[marker.key] != .completed { states[marker.key] = marker.state }
        markerOffsets[marker.requestOffset] = min(markerOffsets[marker.requestOffset] ?? offset, offset)
    }
}
