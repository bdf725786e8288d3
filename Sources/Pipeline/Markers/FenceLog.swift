import Recovery

/// What one owner knows of a markers partition from its fence onwards, read in offset order: the
/// fences written there and, per marker key, the first *valid* `started` marker. The rule every
/// owner applies to the same log, so they all agree on who may call:
///
/// - A `started` marker at offset `o` with epoch `e` (`CallMarker.fence`) is **valid** unless a
///   fence `f` with `e < f < o` was written: its writer had been fenced out before it wrote it,
///   and by the same rule it does not call. A marker without an epoch (an earlier version) is valid.
/// - An owner of epoch `E` whose own `started` marker was acknowledged at `m` calls the issuer only
///   when no fence `f` with `E < f < m` exists (`fencedOut`) and no valid `started` marker for the
///   same key lies before `m` (`startedEarlier`: its writer may be calling; reconcile instead).
///
/// A value type: `MarkerFencing` feeds it the records and asks it for verdicts, on its own queue.
struct FenceLog: Sendable {
    /// What an owner may do once its `started` marker at `m` is acknowledged.
    enum Verdict: Sendable, Equatable {
        /// Its marker is the first valid `started` for the key: call the issuer.
        case call
        /// A newer owner's fence (at this offset) precedes the marker: do not call, give the request up.
        case fencedOut(by: Int64)
        /// A valid `started` for the same key (at this offset) precedes it: another attempt may be
        /// calling; reconcile, never call.
        case startedEarlier(at: Int64)
    }

    /// The owner's epoch: the offset of its own fence.
    let epoch: Int64
    /// The next offset to read: every record before it has been seen.
    private(set) var readTo: Int64
    /// Offsets of the fences seen (ascending), those catch-up found before `readTo` included.
    private(set) var fences: [Int64]
    private var firstStarted: [String: (offset: Int64, requestOffset: Int64)] = [:]
    /// Requests named by the key of a record that could not be read, and the first such offset.
    private var unreadable: [String: Int64] = [:]
    /// Valid `started` markers of other owners read since the last `takeForeign()`: request offset
    /// → marker offset (the ledger keeps the commit metadata from skipping them).
    private var foreign: [Int64: Int64] = [:]

    /// Starts at `readFrom` (the end of the owner's catch-up read, before its own fence) knowing
    /// the fences catch-up saw.
    init(epoch: Int64, readFrom: Int64, fences: [Int64]) {
        self.epoch = epoch
        self.readTo = readFrom
        self.fences = fences.sorted()
    }

    /// Whether a `started` marker at `offset` written with epoch `writer` is valid.
    func isValid(at offset: Int64, writer: Int64?) -> Bool {
        guard let writer else { return true }
        return !fences.contains { $0 > writer && $0 < offset }
    }

    /// Takes the record at `offset`; records must come in offset order (earlier ones are ignored).
    mutating func read(_ record: Record, at offset: Int64) {
        guard offset >= readTo else { return }
        readTo = offset + 1
        switch record {
        case .fence:
            fences.append(offset)
        case .marker(let marker):
            guard marker.state == .started, firstStarted[marker.key] == nil,
                  isValid(at: offset, writer: marker.fence) else { return }
            firstStarted[marker.key] = (offset, marker.requestOffset)
            if marker.fence != epoch { foreign[marker.requestOffset] = min(foreign[marker.requestOffset] ?? offset, offset) }
        case .unreadable(let requestID):
            if let requestID, unreadable[requestID] == nil { unreadable[requestID] = offset }
        case .other:
            break
        }
    }

    /// What the owner may do for its `started` marker of `key` (request `requestID`) acknowledged
    /// at `offset`; nil until the log has been read past it.
    func verdict(key: String, requestID: String, at offset: Int64) -> Verdict? {
        guard readTo > offset else { return nil }
        if let fence = fences.first(where: { $0 > epoch && $0 < offset }) { return .fencedOut(by: fence) }
        if let first = firstStarted[key], first.offset < offset { return .startedEarlier(at: first.offset) }
        if let first = unreadable[requestID], first < offset { return .startedEarlier(at: first) }
        return .call
    }

    /// Forgets what concerns requests before `committed` (they are done; no verdict asks about them).
    mutating func forget(before committed: Int64) {
        firstStarted = firstStarted.filter { $0.value.requestOffset >= committed }
        foreign = foreign.filter { $0.key >= committed }
    }

    /// The valid `started` markers of other owners read since the last call.
    mutating func takeForeign() -> [Int64: Int64] {
        defer { foreign = [:] }
        return foreign
    }

    /// One record of a markers partition, as the log needs it.
    enum Record: Sendable {
        case fence
        case marker(CallMarker)
        /// A record whose value could not be read, with the request its key names (if any).
        case unreadable(String?)
        /// Anything else that needs no attention.
        case other
    }
}
