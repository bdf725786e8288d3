import Simulator

/// The simulation's one thread of time: a virtual clock, a seeded random source, and the events
/// every simulated part schedules (a closure at a time, run in time order, ties in scheduling
/// order). Everything runs on the test's thread, one event at a time, so a seed replays exactly
/// (with `SWIFT_DETERMINISTIC_HASHING=1`, which `scripts/test` and `scripts/simulate` set: the core
/// iterates sets and dictionaries).
///
/// `@unchecked Sendable`: the ports hand `@Sendable` closures around, but only the test's thread
/// ever touches the world.
final class SimWorld: @unchecked Sendable {
    /// Virtual wall-clock milliseconds (epoch-based, so timestamps look real).
    private(set) var nowMs: Int64
    /// Every draw of the run, in order.
    var random: SimulatorRandom
    /// Events run so far.
    private(set) var ran = 0
    private var heap: [Event] = []
    private var sequence: UInt64 = 0
    private let tracing: Bool
    /// The last events' descriptions, when tracing (a failure prints them).
    private(set) var trace: [String] = []

    private struct Event {
        let atMs: Int64
        let sequence: UInt64
        let process: SimProcess?
        let label: StaticString
        let action: () -> Void
    }

    init(seed: UInt64, startMs: Int64, tracing: Bool) {
        random = SimulatorRandom(seed: seed)
        nowMs = startMs
        self.tracing = tracing
    }

    /// Runs `action` at `atMs` (never earlier than now); skipped if `process` has died by then.
    func at(_ atMs: Int64, _ process: SimProcess?, _ label: StaticString, _ action: @escaping () -> Void) {
        sequence += 1
        push(Event(atMs: max(atMs, nowMs), sequence: sequence, process: process, label: label, action: action))
    }

    /// Runs `action` after `delayMs`.
    func after(_ delayMs: Int64, _ process: SimProcess?, _ label: StaticString, _ action: @escaping () -> Void) {
        at(nowMs + max(0, delayMs), process, label, action)
    }

    /// Runs the next event due by `untilMs`; false when none is left before it.
    func runNext(untilMs: Int64) -> Bool {
        while let first = heap.first, first.atMs <= untilMs {
            let event = pop()
            nowMs = event.atMs
            if let process = event.process, !process.isAlive { continue }
            ran += 1
            if tracing && event.label.description != "poll turn" { note("\(event.process?.name ?? "cluster"): \(event.label)") }
            event.action()
            return true
        }
        return false
    }

    /// Drops every event still queued (the run is over): their closures hold the workers.
    func clear() {
        heap.removeAll()
    }

    /// Adds a line to the trace (when tracing).
    func note(_ line: @autoclosure () -> String) {
        guard tracing else { return }
        trace.append("\(nowMs - SimulationRun.epochMs) \(line())")
        if trace.count > 20_000 { trace.removeFirst(10_000) }
    }

    /// Whether a run is traced.
    var isTracing: Bool { tracing }

    // MARK: - Draws

    /// A value in `range` (inclusive).
    func int(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &random) }

    /// True with probability `p`.
    func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

    /// One of `items` (not empty).
    func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }

    // MARK: - Heap

    private static func before(_ a: Event, _ b: Event) -> Bool {
        a.atMs != b.atMs ? a.atMs < b.atMs : a.sequence < b.sequence
    }

    private func push(_ event: Event) {
        heap.append(event)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() -> Event {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, Self.before(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, Self.before(heap[right], heap[smallest]) { smallest = right }
                guard smallest != parent else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}
