/// Simulated time and the pending events, run one at a time in time order (ties in the order
/// they were scheduled): the whole simulation is single-threaded, so what happens is a function
/// of the seed alone.
final class SimEvents {
    private struct Event {
        let atMs: Int64
        let sequence: UInt64
        let action: () -> Void
    }

    private(set) var nowMs: Int64 = 0
    private var heap: [Event] = []
    private var sequence: UInt64 = 0
    /// Events run so far.
    private(set) var ran = 0

    /// Runs `action` `delayMs` from now.
    func after(_ delayMs: Int64, _ action: @escaping () -> Void) {
        sequence += 1
        heap.append(Event(atMs: nowMs + max(0, delayMs), sequence: sequence, action: action))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Runs the next event due by `untilMs`; false when none is.
    func runNext(untilMs: Int64) -> Bool {
        guard let first = heap.first, first.atMs <= untilMs else { return false }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < heap.count, Self.before(heap[left], heap[best]) { best = left }
                if right < heap.count, Self.before(heap[right], heap[best]) { best = right }
                if best == parent { break }
                heap.swapAt(parent, best)
                parent = best
            }
        }
        nowMs = first.atMs
        ran += 1
        first.action()
        return true
    }

    private static func before(_ a: Event, _ b: Event) -> Bool {
        a.atMs != b.atMs ? a.atMs < b.atMs : a.sequence < b.sequence
    }
}
