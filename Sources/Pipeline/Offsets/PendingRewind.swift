/// A partition's rewind, kept until it took effect. After a seek back to `offset`, no record past
/// it is taken before the offset itself came back: a later one first means the seek was refused or
/// never carried out (librdkafka's asynchronous seek reports nothing), and the partition is
/// rewound again; otherwise the records before it would be committed past (the offset tracker
/// accepts gaps, which compaction and control records make). Both consumer loops (requests:
/// `PartitionLifecycle`; reconciliation: `ReconcileRunner`) keep one per rewound partition.
///
/// A rewind is repeated at most once per poll turn (the rest of that turn's records were fetched
/// before the new seek: one poll's batch past the offset is one failed seek, not twenty), in at
/// most `maximumRepeats` turns: the offset may be gone (retention deleted it), and a partition
/// must not loop for ever.
struct PendingRewind: Sendable, Equatable {
    /// How many poll turns a rewind is repeated in before a record past it is taken.
    static let maximumRepeats = 20

    /// The offset rewound to.
    private(set) var offset: Int64
    /// Turns in which the rewind was repeated.
    private var repeats = 0
    /// The turn whose rewind was repeated last.
    private var repeatedInTurn: UInt64?

    /// What a record says of the rewind.
    enum Verdict: Sendable, Equatable {
        /// The rewind is over (the offset came back, or the repeats ran out): take the record and
        /// forget the rewind.
        case tookEffect
        /// A record past the offset came first: seek back to `offset` again (counted).
        case rewindAgain(offset: Int64)
        /// A record past the offset, fetched in the turn that repeated the rewind already.
        case awaitingRewind(offset: Int64)
    }

    /// A rewind to `offset`.
    init(to offset: Int64) {
        self.offset = offset
    }

    /// Rewound again, to `offset`: the rewind waits for the earlier of the two.
    mutating func lower(to offset: Int64) {
        self.offset = min(self.offset, offset)
    }

    /// A record at `recordOffset` arrived in poll turn `turn`.
    mutating func record(at recordOffset: Int64, turn: UInt64) -> Verdict {
        guard recordOffset > offset, repeats < Self.maximumRepeats else { return .tookEffect }
        guard repeatedInTurn != turn else { return .awaitingRewind(offset: offset) }
        repeatedInTurn = turn
        repeats += 1
        return .rewindAgain(offset: offset)
    }
}
