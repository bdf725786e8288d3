import Recovery

/// What one look-up of a marker key found in a markers partition (`MarkerCatchUp.lookUp`), built
/// marker by marker in offset order: a pure value, so the rules for which markers count are read
/// and tested without a reader.
struct MarkerLookUp: Sendable, Equatable {
    /// What a previous owner's `completed` marker says about a request.
    enum Completion: Sendable, Equatable {
        /// Its result was published.
        case answered
        /// It was dead-lettered: no result was published.
        case deadLettered
        /// No `completed` marker (yet), or the partition could not be read to its end.
        case notFound
    }

    /// A decision read (`CallMarker.isDecision`): where, and the result it decided.
    struct Decision: Sendable, Equatable {
        var offset: Int64
        var result: [UInt8]
    }

    /// The fences read so far (a decision without a call by a fenced-out writer counts for nothing).
    var fences: [InheritedMarkers.Fence] = []
    /// The previous owner's `completed` marker, if any (a new owner's `recovered` does not count).
    var completion: Completion = .notFound
    /// The first decision for the key.
    var decision: Decision?
    /// Whether a plain `completed` marker follows that decision: it was published.
    var decisionPublished = false
    /// Whether a `started` marker speaks for the key (a call may have been made).
    var started = false

    /// Takes in one marker read at `offset` (in offset order): only `completed` markers that
    /// speak for `key` count (`CallMarker.Key.speaks(for:)`), a new owner's `recovered` is not a
    /// previous owner's answer, and a fenced-out writer's decision without a call counts for nothing.
    mutating func add(_ marker: CallMarker, at offset: Int64, key: CallMarker.Key) {
        if marker.state == .started, marker.key.speaks(for: key) { started = true }
        guard marker.key.speaks(for: key), marker.state == .completed, marker.outcome != .recovered else { return }
        if InheritedMarkers.countsOnlyIfNotFencedOut(marker), InheritedMarkers.isFencedOut(marker, at: offset, fences: fences) { return }
        completion = marker.outcome == .deadLettered ? .deadLettered : .answered
        if decision == nil, marker.isDecision, let result = marker.result {
            decision = Decision(offset: offset, result: result)
        } else if decision != nil, marker.result == nil {
            decisionPublished = true
        }
    }
}
