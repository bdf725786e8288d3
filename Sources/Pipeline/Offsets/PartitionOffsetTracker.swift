/// Tracks out-of-order completion in one partition and says which offset is safe to commit.
///
/// Offsets are tracked in arrival order (increasing). The committable offset is the first offset
/// not yet completed; every offset below it is done. Completing out of order is fine; a gap in
/// offsets (compaction, control records) is fine too. A record delivered again at or below the
/// last offset tracked (the consumer rewound its fetch position, as librdkafka can on a
/// pause/resume) is refused: it is already tracked, and a second entry would never complete.
struct PartitionOffsetTracker: Sendable {
    private var offsets: [Int64] = []
    private var done: [Bool] = []
    private var head = 0
    /// The highest offset tracked (kept when the front of `offsets` is dropped).
    private(set) var lastTracked: Int64?
    /// The offset after the last one known complete at the front; `nil` before anything completes.
    private var frontier: Int64?

    /// Creates an empty tracker.
    init() {}

    /// Number of offsets received and not yet complete.
    private(set) var pendingCount = 0

    /// Whether `track(offset)` would record it (it is greater than every offset tracked before).
    func accepts(_ offset: Int64) -> Bool {
        lastTracked.map { offset > $0 } ?? true
    }

    /// Records a received offset; returns false (nothing recorded) when it is not greater than
    /// every offset tracked before: a redelivery of a record already tracked.
    @discardableResult
    mutating func track(_ offset: Int64) -> Bool {
        if let lastTracked, offset <= lastTracked { return false }
        lastTracked = offset
        offsets.append(offset)
        done.append(false)
        pendingCount += 1
        return true
    }

    /// Marks `offset` complete; returns false when it was not tracked (or already complete).
    @discardableResult
    mutating func complete(_ offset: Int64) -> Bool {
        guard let index = position(of: offset), !done[index] else { return false }
        done[index] = true
        pendingCount -= 1
        while head < offsets.count && done[head] {
            frontier = offsets[head] + 1
            head += 1
        }
        if head > 256 && head * 2 > offsets.count {
            offsets.removeFirst(head)
            done.removeFirst(head)
            head = 0
        }
        return true
    }

    /// The offset to commit (next offset to consume), or nil when nothing new can be committed.
    var committableOffset: Int64? {
        frontier
    }

    /// The first offset tracked and not yet complete (nil when none).
    var firstPending: Int64? { head < offsets.count ? offsets[head] : nil }

    /// The offsets complete after the first one that is not, as ranges of consecutive tracked
    /// offsets (at most `limit`; the earliest first).
    func completedBeyondFrontier(limit: Int) -> [ClosedRange<Int64>] {
        var ranges: [ClosedRange<Int64>] = []
        var start: Int64?
        var last: Int64 = 0
        var index = head
        while index < offsets.count && ranges.count < limit {
            if done[index] {
                if start == nil { start = offsets[index] }
                last = offsets[index]
            } else if let first = start {
                ranges.append(first...last)
                start = nil
            }
            index += 1
        }
        if let first = start, ranges.count < limit { ranges.append(first...last) }
        return ranges
    }

    /// Whether every tracked offset is complete.
    var isDrained: Bool { pendingCount == 0 }

    private func position(of offset: Int64) -> Int? {
        var low = head
        var high = offsets.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if offsets[middle] == offset { return middle }
            if offsets[middle] < offset { low = middle + 1 } else { high = middle - 1 }
        }
        return nil
    }
}
