import Contract

/// Requests answered within the duplicate horizon, as their `completed` markers say: a bounded set
/// of 96-bit fingerprints of request identities in the requests partition that answered them
/// (program, request id, partition; a marker of an earlier version, without a program, gives its
/// request id's legacy fingerprint) in arrival order. `DuplicateHorizon` holds one per program.
///
/// A plain value type (time passed in). Entries live in a ring (oldest first) that grows by
/// doubling up to `maxEntries`; an open-addressing table (linear probing, at most 2/3 full) finds
/// them. About 16 bytes per entry in the ring and 6 to 12 in the table. When full, the oldest entry
/// goes first, counted in `evictedBeforeHorizon` when it had not expired yet.
///
/// Fingerprints use the process's randomly seeded `Hasher` (two salted hashes): a collision that
/// would make a new request look answered has odds of about `count / 2^96` per lookup.
package struct AnsweredIndex: Sendable {
    /// A request identity's fingerprint.
    package struct Fingerprint: Sendable, Hashable {
        var high: UInt64
        var low: UInt32

        /// The fingerprint of `requestID` under `program` answered in requests partition
        /// `partition`, in this process; `program` nil: the legacy fingerprint of a request id
        /// answered by an earlier version, which recorded no program (it never equals an
        /// identity's: the hash input says which it is).
        package init(program: String?, requestID: String, partition: Int32) {
            var first = Hasher()
            first.combine(0x5EED_0001 as UInt32)
            first.combine(program)
            first.combine(requestID)
            first.combine(partition)
            var second = Hasher()
            second.combine(0x5EED_0002 as UInt32)
            second.combine(program)
            second.combine(requestID)
            second.combine(partition)
            high = UInt64(truncatingIfNeeded: first.finalize())
            low = UInt32(truncatingIfNeeded: second.finalize())
        }

        /// The fingerprint of request `identity` answered in requests partition `partition`.
        package init(_ identity: RequestIdentity, partition: Int32) {
            self.init(program: identity.program, requestID: identity.requestID, partition: partition)
        }
    }

    private struct Entry {
        var high: UInt64
        var low: UInt32
        /// Epoch seconds after which the entry no longer counts.
        var expiresAt: UInt32
    }

    /// The most entries held.
    package let maxEntries: Int
    private var ring: [Entry] = []
    private var head = 0
    /// Entries held (expired ones count until they reach the head).
    package private(set) var count = 0
    private var slots: [Int32] = []
    private var mask = 0
    /// Entries pushed out by the bound before they expired.
    package private(set) var evictedBeforeHorizon = 0

    /// An empty index of at most `maxEntries` ids.
    package init(maxEntries: Int) {
        self.maxEntries = max(1, min(maxEntries, Int(Int32.max)))
    }

    /// Bytes allocated for the ring and the table (what the index costs, whatever is in it).
    package var allocatedBytes: Int { ring.count * MemoryLayout<Entry>.stride + slots.count * MemoryLayout<Int32>.stride }

    /// Bytes an index of `maxEntries` allocates once full (its largest size: it grows up to it).
    package static func allocatedBytes(maxEntries: Int) -> Int {
        maxEntries * MemoryLayout<Entry>.stride + tableSize(capacity: maxEntries) * MemoryLayout<Int32>.stride
    }

    /// The most entries an index may hold for its allocation never to pass `bytes` (0 when not even one fits).
    package static func maxEntries(fittingBytes bytes: Int) -> Int {
        var low = 0
        var high = max(0, bytes / MemoryLayout<Entry>.stride)
        while low < high {
            let middle = (low + high + 1) / 2
            if allocatedBytes(maxEntries: middle) <= bytes { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// Records an answered request whose horizon ends at `expiresAtMs`; expired entries at the
    /// head are dropped first. A fingerprint already held keeps its entry.
    package mutating func insert(_ fingerprint: Fingerprint, expiresAtMs: Int64, nowMs: Int64) {
        let now = Self.seconds(nowMs)
        let expiry = Self.seconds(expiresAtMs + 999)
        guard expiry > now else { return }
        dropExpired(now: now)
        if find(fingerprint) != nil { return }
        if count == ring.count {
            if ring.count < maxEntries {
                grow()
            } else {
                if ring[head].expiresAt > now { evictedBeforeHorizon += 1 }
                removeOldest()
            }
        }
        let position = (head + count) % ring.count
        ring[position] = Entry(high: fingerprint.high, low: fingerprint.low, expiresAt: expiry)
        count += 1
        var slot = Self.home(fingerprint.high, mask)
        while slots[slot] >= 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(position)
    }

    /// Whether `fingerprint` was answered and its horizon has not ended at `nowMs`.
    package func contains(_ fingerprint: Fingerprint, nowMs: Int64) -> Bool {
        guard let position = find(fingerprint) else { return false }
        return ring[position].expiresAt > Self.seconds(nowMs)
    }

    /// Drops entries whose horizon ended (those at the head, in arrival order).
    package mutating func dropExpired(nowMs: Int64) { dropExpired(now: Self.seconds(nowMs)) }

    // MARK: - Internals

    private static func seconds(_ ms: Int64) -> UInt32 { UInt32(clamping: max(0, ms) / 1000) }

    private static func home(_ high: UInt64, _ mask: Int) -> Int { Int(truncatingIfNeeded: high) & mask }

    private func find(_ fingerprint: Fingerprint) -> Int? {
        guard !slots.isEmpty else { return nil }
        var slot = Self.home(fingerprint.high, mask)
        while slots[slot] >= 0 {
            let entry = ring[Int(slots[slot])]
            if entry.high == fingerprint.high && entry.low == fingerprint.low { return Int(slots[slot]) }
            slot = (slot + 1) & mask
        }
        return nil
    }

    private mutating func dropExpired(now: UInt32) {
        while count > 0 && ring[head].expiresAt <= now { removeOldest() }
    }

    /// Removes the head entry and its table slot (backward-shift deletion keeps probes unbroken).
    private mutating func removeOldest() {
        let entry = ring[head]
        var hole = Self.home(entry.high, mask)
        while Int(slots[hole]) != head { hole = (hole + 1) & mask }
        slots[hole] = -1
        var next = (hole + 1) & mask
        while slots[next] >= 0 {
            let home = Self.home(ring[Int(slots[next])].high, mask)
            // The entry at `next` may move into the hole when its home is not in (hole, next].
            let distanceToHome = (next - home) & mask
            let distanceToHole = (next - hole) & mask
            if distanceToHome >= distanceToHole {
                slots[hole] = slots[next]
                slots[next] = -1
                hole = next
            }
            next = (next + 1) & mask
        }
        head = (head + 1) % ring.count
        count -= 1
    }

    /// The table's size for a ring of `capacity`: a power of two, at most 2/3 full.
    private static func tableSize(capacity: Int) -> Int {
        var size = 1
        while size < capacity + capacity / 2 + 1 { size <<= 1 }
        return size
    }

    /// Doubles the ring (up to `maxEntries`), oldest entry first at position 0, and rebuilds the table.
    private mutating func grow() {
        let capacity = min(maxEntries, max(64, ring.count * 2))
        var newRing = [Entry](repeating: Entry(high: 0, low: 0, expiresAt: 0), count: capacity)
        for index in 0..<count { newRing[index] = ring[(head + index) % ring.count] }
        ring = newRing
        head = 0
        let tableSize = Self.tableSize(capacity: capacity)
        slots = [Int32](repeating: -1, count: tableSize)
        mask = tableSize - 1
        for position in 0..<count {
            var slot = Self.home(ring[position].high, mask)
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(position)
        }
    }
}
