import Synchronization

/// A clock offset a test can move while a call is in flight.
final class Skew: Sendable {
    private let storage = Atomic<Int64>(0)
    var offsetMs: Int64 {
        get { storage.load(ordering: .relaxed) }
        set { storage.store(newValue, ordering: .relaxed) }
    }
}
