/// A dictionary that forgets its oldest keys (by first insertion) beyond `capacity` entries, so
/// long benchmark runs cannot grow the simulator's memory without bound.
struct BoundedStore<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private(set) var values: [Key: Value] = [:]
    private var order: [Key] = []
    private var head = 0
    /// Most entries kept.
    let capacity: Int

    init(capacity: Int) {
        precondition(capacity > 0, "a bounded store needs room for one entry")
        self.capacity = capacity
    }

    /// Entries held.
    var count: Int { values.count }

    subscript(key: Key) -> Value? {
        values[key]
    }

    /// Stores `value` under `key`; a new key may push the oldest one out.
    mutating func set(_ value: Value, for key: Key) {
        if values.updateValue(value, forKey: key) == nil {
            order.append(key)
            evictOverflow()
        }
    }

    /// Forgets everything.
    mutating func removeAll() {
        values.removeAll()
        order.removeAll()
        head = 0
    }

    private mutating func evictOverflow() {
        while values.count > capacity, head < order.count {
            values.removeValue(forKey: order[head])
            head += 1
        }
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
