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

    /// Nothing found.
    init() {}

    /// Records `marker`, read at markers offset `offset`.
    mutating func add(_ marker: CallMarker, at offset: Int64) {
        if states[marker.key] != .completed { states[marker.key] = marker.state }
        markerOffsets[marker.requestOffset] = min(markerOffsets[marker.requestOffset] ?? offset, offset)
    }
}
