/// A fixed-capacity map that forgets its oldest insertion when full (FIFO); O(1) per operation.
struct BoundedCache<Key: Hashable, Value> {
    private var values: [Key: Value] = [:]
    private var ring: [Key?]
    private var next = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        ring = Array(repeating: nil, count: self.capacity)
    }

    var count: Int { values.count }

    subscript(key: Key) -> Value? { values[key] }

    mutating func insert(_ value: Value, for key: Key) {
        if values.updateValue(value, forKey: key) != nil { return }
        if let evicted = ring[next] { values.removeValue(forKey: evicted) }
        ring[next] = key
        next = (next + 1) % capacity
    }
}
