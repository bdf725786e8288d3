import Synchronization

/// A value shared between threads behind a mutex.
final class LockedBox<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) {
        storage = Mutex(value)
    }

    func get() -> Value { storage.withLock { $0 } }

    func set(_ value: Value) { storage.withLock { $0 = value } }
}
