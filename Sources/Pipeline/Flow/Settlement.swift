import Recovery

/// How a request's record leaves the worker. Every exit of `RequestFlow` ends in one of these,
/// handed to `Settler.settle`, the only code that touches the exactly-once bookkeeping.
enum RecordExit: Sendable, Equatable {
    /// Its result (and reconciliation job, if any) is acknowledged by Kafka. `recovered`: the
    /// answer is a reconciliation after a previous owner's `started` marker; `afterCall`: a
    /// `started` marker was written for it, so the issuer may have been called.
    case answered(recovered: Bool, afterCall: Bool)
    /// Its final result is acknowledged, and its decision (`FinalDecider`) was written before it:
    /// a plain `completed` marker follows, so a later reader knows the decision was published
    /// (without it, a redelivery publishes the decision again). `afterCall`: a `started` marker
    /// was written for it (else the answer came without a call, and the offset waits for the
    /// plain marker: see `Settlement.init`).
    case decided(afterCall: Bool)
    /// Its dead letter is acknowledged. `afterStartedMarker`: a `started` marker was written for
    /// it, so a `completed` one must follow (a redelivery then ignores it instead of reconciling).
    case deadLettered(afterStartedMarker: Bool)
    /// A duplicate ignored: already answered, or in flight under this delivery.
    case duplicate
    /// Given up without an answer: the partition is no longer this generation's, a newer owner
    /// fenced it, or neither result nor dead letter could be written. The offset is not completed,
    /// so the next owner (or a restart) redoes the request.
    case abandoned
}

/// What settling an exit does, decided from the exit alone: a value, carried out by `Settler`
/// (the `WorkScheduler` habit), and unit-tested as a table.
struct Settlement: Sendable, Equatable {
    /// What becomes of the request id in the duplicate filter.
    enum Claim: Sendable, Equatable {
        /// Finished: later copies within the horizon are duplicates.
        case finish
        /// Released: a later copy is new work (given up, or dead-lettered so a replay can run).
        case release
        /// Untouched: this record claimed nothing, so it may not free or finish the id (a
        /// malformed or unauthentic message naming another request's id, or a duplicate of a
        /// copy still in flight).
        case untouched
    }

    /// What becomes of the record's offset in the ledger.
    enum Offset: Sendable, Equatable {
        /// Done: it may be committed once the offsets before it are.
        case complete
        /// Given up: never completed here, redelivered to the next owner.
        case abandon
    }

    /// The `completed` marker to write (nil: none); before the offset completes when `awaitsMarker`.
    let completedMarker: CallMarker.Outcome?
    /// Whether the offset completes only once the `completed` marker's write ended.
    let awaitsMarker: Bool
    /// Whether the answer goes into the duplicate horizon once its marker is acknowledged (at once
    /// when it writes none).
    let recordsInHorizon: Bool
    let claim: Claim
    let offset: Offset

    /// The settlement of `exit` for a record that `claimed` its request id in the duplicate
    /// filter (intake's `duplicate` and `admitted` decisions) or not (every earlier one).
    init(_ exit: RecordExit, claimed: Bool) {
        switch exit {
        case .answered(let recovered, let afterCall):
            // A claimed answer leaves a `completed` marker, with or without a `started` one: a next
            // owner redelivered the request before its commit ignores it instead of answering again.
            // Every claimed answer goes into the duplicate horizon, with or without a call: a copy
            // of the request produced again reaches a later owner past the commit, where only the
            // horizon says it was answered (answering it there would give the request a second,
            // different final). An answer that claimed nothing (an
            // early rejection of a message naming some request id) touches nothing that id's
            // genuine request depends on: no marker, no claim, no horizon; a redelivery of it is
            // rejected again, identically.
            completedMarker = !claimed ? nil : recovered ? .recovered : afterCall ? .answered : .answeredWithoutCall
            awaitsMarker = true
            recordsInHorizon = claimed
            claim = claimed ? .finish : .untouched
            offset = .complete
        case .decided(let afterCall):
            // The decision, written before the result, already says `completed`; this marker says
            // it was published. After a call the decision counts for the duplicate horizon, so the
            // offset does not wait. Without a call it does not (it carries its writer's fence and
            // may have been withdrawn): only this marker tells an owner past the commit that a copy
            // produced again is answered, so the offset completes once it is acknowledged, as
            // after any answer. Not awaited, a commit could pass the request while its marker was
            // still in flight, and the copy would reach the issuer under a final saying it never did.
            completedMarker = afterCall ? .answered : .answeredWithoutCall
            awaitsMarker = !afterCall
            recordsInHorizon = true
            claim = .finish
            offset = .complete
        case .deadLettered(let afterStartedMarker):
            completedMarker = afterStartedMarker ? .deadLettered : nil
            awaitsMarker = true
            recordsInHorizon = false
            claim = claimed ? .release : .untouched
            offset = .complete
        case .duplicate:
            completedMarker = nil
            awaitsMarker = true
            recordsInHorizon = false
            claim = claimed ? .finish : .untouched
            offset = .complete
        case .abandoned:
            completedMarker = nil
            awaitsMarker = true
            recordsInHorizon = false
            claim = claimed ? .release : .untouched
            offset = .abandon
        }
    }
}
