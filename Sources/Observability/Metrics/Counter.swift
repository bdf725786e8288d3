import Synchronization

/// A monotonically increasing count (Prometheus `counter`).
public final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    init() {}

    /// Adds `amount` (default 1).
    public func increment(by amount: Int = 1) {
        count.add(amount, ordering: .relaxed)
    }

    /// The current count.
    public var value: Int { count.load(ordering: .relaxed) }
}
