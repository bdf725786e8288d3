import Recovery

/// What this process knows of one markers partition from its first fence there onwards, in offset
/// order: which offsets are accounted for (its own acknowledged writes, or records it read) and the
/// fences of *other* processes found among them. The zombie rule, the same for
/// every owner:
///
/// - An owner of epoch `e` (the offset of its own fence) whose `started` marker was acknowledged
///   at `m` calls the issuer only when no fence of another process lies in `(e, m)`.
/// - Catch-up (`InheritedMarkers`) ignores a `started` marker at `o` written with epoch `e` by
///   process `i` when a fence of a process other than `i` lies in `(e, o)`: by the rule above its
///   writer did not call.
///
/// The new owner writes its fence *before* its catch-up reads the partition, so every marker of a
/// previous owner before the fence is seen by the catch-up (and reconciled, never called again),
/// and every one after it is fenced out. So the verdict needs only the fences in `(e, m)`, and
/// those are found without reading in the common case: when every offset in `(e, m)` is one of
/// this process's own acknowledged writes, no fence of anybody else can be there. Only a gap (an
/// offset this process did not write: another process's record, or an own write whose offset was
/// never reported) is read from the partition (`MarkerFencing`).
///
/// A value type: `MarkerFencing` drives it under its lock.
struct FenceLog: Sendable {
    /// What an owner may do once its `started` marker at `m` is acknowledged.
    enum Verdict: Sendable, Equatable {
        /// No other process's fence precedes the marker: call the issuer.
        case call
        /// Another process's fence (at this offset) precedes the marker: do not call, give the request up.
        case fencedOut(by: Int64)
        /// Offsets before the marker are not accounted for yet: wait for own writes, or read.
        case unknown(from: Int64)
    }

    /// Every offset in `start..<known` is accounted for.
    let start: Int64
    /// The first offset not accounted for.
    private(set) var known: Int64
    /// Own acknowledged writes at or after `known` (not yet contiguous).
    private(set) var own: Set<Int64> = []
    /// Fences of other processes read, ascending, with what the rule compares of each.
    private(set) var foreignFences: [(offset: Int64, stamp: FenceStamp)] = []
    /// This process's own fences in the partition (epochs) and what the rule compares of each.
    private(set) var ownFences: [Int64: FenceStamp] = [:]

    /// Starts at this process's fence at `fence`, stamped `stamp` (its own write: accounted).
    init(fence: Int64, stamp: FenceStamp = FenceStamp()) {
        start = fence
        known = fence + 1
        ownFences[fence] = stamp
    }

    /// Another own fence (a later assignment of the partition to this process) at `offset`.
    mutating func ownFence(at offset: Int64, stamp: FenceStamp) {
        ownFences[offset] = stamp
        ownWrite(at: offset)
    }

    /// This process's write was acknowledged at `offset`.
    mutating func ownWrite(at offset: Int64) {
        guard offset >= known else { return }
        own.insert(offset)
        advance()
    }

    /// A record read from the partition at `offset` (`foreignFence`: a fence of another process,
    /// with what the rule compares of it); the records before it since the last one read do not exist
    /// (`offset` is the next in the log).
    /// True when that fence landed late: it lies after this process's latest own fence and fences
    /// that owner out of nothing (`MarkerFence.supersedes`).
    @discardableResult
    mutating func read(at offset: Int64, foreignFence: MarkerFence?) -> Bool {
        guard offset >= known else { return false }
        if let foreignFence { foreignFences.append((offset, foreignFence.stamp)) }
        known = offset + 1
        own = own.filter { $0 >= known }
        advance()
        guard let foreignFence, let latest = ownFences.keys.max(), offset > latest else { return false }
        return !MarkerFence.supersedes(foreignFence.stamp, owner: ownFences[latest] ?? FenceStamp())
    }

    /// The partition's end was read: no record lies in `known..<end`.
    mutating func readEnd(_ end: Int64) {
        guard end > known else { return }
        known = end
        own = own.filter { $0 >= known }
        advance()
    }

    private mutating func advance() {
        while own.remove(known) != nil { known += 1 }
    }

    /// The verdict for a `started` marker at `marker` written with epoch `epoch`, a fence of this
    /// process (one before `start` belongs to an assignment this log no longer follows: fenced out).
    /// A foreign fence in between fences it out when it is not older than the epoch's
    /// (`MarkerFence.supersedes`: by group generation, or across groups by when each was
    /// written); an older one landed late, after its writer gave the partition up, and is ignored.
    func verdict(epoch: Int64, marker: Int64) -> Verdict {
        let own = ownFences[epoch] ?? FenceStamp()
        if let fence = foreignFences.first(where: { $0.offset > epoch && $0.offset < marker && MarkerFence.supersedes($0.stamp, owner: own) }) {
            return .fencedOut(by: fence.offset)
        }
        if epoch < start { return .fencedOut(by: start) }
        return known >= marker ? .call : .unknown(from: known)
    }

    /// Offsets before `marker` not accounted for and not among the own writes seen.
    func missing(before marker: Int64) -> Int64 {
        guard marker > known else { return 0 }
        return marker - known - Int64(own.filter { $0 < marker }.count)
    }
}
