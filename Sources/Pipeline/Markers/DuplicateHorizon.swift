import Contract
import Kafka
import Synchronization

/// Requests (identities) answered within the duplicate horizon, in the requests partitions this
/// worker owns: what makes a copy of an answered request a duplicate on any worker that owns its
/// partition, after restarts and rebalances. Filled by marker catch-up from the horizon
/// (`MarkerHorizonRead`) when a partition is assigned, then by this worker's own
/// `completed` markers.
///
/// One byte budget (`duplicates.max_bytes`) holds every answer, of owned partitions and of
/// released ones alike, so memory does not grow with the partition count: it is shared out among
/// the configured programs by weight (`programs.<name>.duplicate_share`, one share besides for
/// answers of programs no longer configured and of earlier versions, which recorded none), and
/// each share is one `AnsweredIndex` over every partition (an entry's fingerprint names its
/// partition). A program's flood of distinct requests pushes out only its own oldest answers.
///
/// A released partition's answers stay (until evicted or expired) with the markers offset they are
/// complete up to, kept for one horizon, so this process's next assignment of the partition (an
/// eager rebalance gives every partition back and takes most of them again) reads only the
/// markers written since instead of the whole horizon. Only owned partitions answer `contains`.
final class DuplicateHorizon: Sendable {
    /// One answer read from the markers topic by catch-up.
    struct Answer: Sendable {
        /// The program its marker names; nil for an earlier version's marker.
        var program: String?
        var fingerprint: AnsweredIndex.Fingerprint
        var expiresAtMs: Int64
    }

    /// The share of answers of programs not configured here and of earlier versions' markers.
    static let otherShare = "(unconfigured)"

    private struct State {
        /// One index per share (configured program, or `otherShare`).
        var indexes: [String: AnsweredIndex] = [:]
        /// Owned partitions and the markers offset each one's answers are complete up to.
        var owned: [TopicPartition: Int64] = [:]
        /// Released partitions: the markers offset their answers are complete up to, and when
        /// they were released (epoch ms).
        var kept: [TopicPartition: (readThrough: Int64, releasedAtMs: Int64)] = [:]

        /// Forgets read positions of released partitions none of whose answers can count any more.
        mutating func expire(nowMs: Int64, horizonMs: Int64) {
            kept = kept.filter { $0.value.releasedAtMs + horizonMs > nowMs }
        }
    }

    /// How long an answer counts.
    let horizonMs: Int64
    /// The most entries each share's index holds (its part of the byte budget).
    let maxEntries: [String: Int]
    private let state = Mutex(State())

    /// A horizon of `horizonMs` whose indexes together never allocate more than `maxBytes`, split
    /// by `shares` (program name → weight) and one share of weight 1 for every other program.
    init(horizonMs: Int64, maxBytes: Int, shares: [String: Int]) {
        self.horizonMs = horizonMs
        var weights = shares.filter { $0.key != Self.otherShare }.mapValues { max(1, $0) }
        weights[Self.otherShare] = 1
        let total = weights.values.reduce(0, +)
        maxEntries = weights.mapValues { AnsweredIndex.maxEntries(fittingBytes: maxBytes / total * $0) }
    }

    /// The share `program` is held in.
    func share(of program: String?) -> String {
        guard let program, maxEntries[program] != nil else { return Self.otherShare }
        return program
    }

    /// What catch-up of `partition` assigned at `nowMs` must read: the horizon, or only what
    /// follows the answers kept from this process's earlier assignment of it.
    func read(_ partition: TopicPartition, nowMs: Int64) -> MarkerHorizonRead {
        let kept = state.withLock { state in
            state.expire(nowMs: nowMs, horizonMs: horizonMs)
            return state.kept[partition]?.readThrough
        }
        return .init(sinceMs: nowMs - horizonMs, horizonMs: horizonMs, nowMs: nowMs, keptReadThrough: kept)
    }

    /// Adds answers catch-up read (of a partition being assigned; they are true whether or not
    /// the assignment lasts).
    func add(_ answers: [Answer], nowMs: Int64) {
        guard !answers.isEmpty else { return }
        state.withLock { state in
            for answer in answers { insert(&state, answer.fingerprint, share: share(of: answer.program), expiresAtMs: answer.expiresAtMs, nowMs: nowMs) }
        }
    }

    /// `partition`'s catch-up ended: every answer up to markers offset `readThrough` is held, and
    /// the partition answers `contains` from now on.
    func install(_ partition: TopicPartition, readThrough: Int64) {
        state.withLock { state in
            state.kept[partition] = nil
            state.owned[partition] = readThrough
        }
    }

    /// This worker answered request `identity` in `partition` at `answeredAtMs` (its `completed`
    /// marker was written); ignored for a partition not (or no longer) owned here.
    func record(_ identity: RequestIdentity, in partition: TopicPartition, answeredAtMs: Int64, nowMs: Int64) {
        let fingerprint = AnsweredIndex.Fingerprint(identity, partition: partition.partition)
        state.withLock { state in
            guard state.owned[partition] != nil else { return }
            insert(&state, fingerprint, share: share(of: identity.program), expiresAtMs: answeredAtMs + horizonMs, nowMs: nowMs)
        }
    }

    /// Whether request `identity` was answered in `partition` within the horizon: by its identity,
    /// or by its request id alone when an earlier version (which recorded no program) answered it.
    func contains(_ identity: RequestIdentity, in partition: TopicPartition, nowMs: Int64) -> Bool {
        let fingerprint = AnsweredIndex.Fingerprint(identity, partition: partition.partition)
        let legacy = AnsweredIndex.Fingerprint(program: nil, requestID: identity.requestID, partition: partition.partition)
        let share = share(of: identity.program)
        return state.withLock { state in
            guard state.owned[partition] != nil else { return false }
            return state.indexes[share]?.contains(fingerprint, nowMs: nowMs) == true
                || state.indexes[Self.otherShare]?.contains(legacy, nowMs: nowMs) == true
        }
    }

    /// Partitions no longer owned (released at `nowMs`): their answers stay for a later
    /// assignment of the same partitions (`read`), none of them answering `contains` meanwhile.
    func remove(_ partitions: [TopicPartition], nowMs: Int64) {
        state.withLock { state in
            state.expire(nowMs: nowMs, horizonMs: horizonMs)
            for partition in partitions {
                guard let readThrough = state.owned.removeValue(forKey: partition) else { continue }
                state.kept[partition] = (readThrough, nowMs)
            }
        }
    }

    private func insert(_ state: inout State, _ fingerprint: AnsweredIndex.Fingerprint, share: String, expiresAtMs: Int64, nowMs: Int64) {
        if state.indexes[share] == nil { state.indexes[share] = AnsweredIndex(maxEntries: maxEntries[share] ?? 1) }
        state.indexes[share]!.insert(fingerprint, expiresAtMs: expiresAtMs, nowMs: nowMs)
    }

    /// Answers held, of owned and released partitions (metrics).
    var count: Int { state.withLock { $0.indexes.values.reduce(0) { $0 + $1.count } } }

    /// Bytes the indexes hold allocated (metrics): never more than the budget.
    var allocatedBytes: Int { state.withLock { $0.indexes.values.reduce(0) { $0 + $1.allocatedBytes } } }

    /// Released partitions whose read position is kept.
    var keptCount: Int { state.withLock { $0.kept.count } }

    /// Answers pushed out of each share by its bound before their horizon ended, since the worker
    /// started (metrics; every share is listed).
    var evictedBeforeHorizon: [String: Int] {
        state.withLock { state in
            maxEntries.mapValues { _ in 0 }.merging(state.indexes.mapValues(\.evictedBeforeHorizon)) { $1 }
        }
    }
}
