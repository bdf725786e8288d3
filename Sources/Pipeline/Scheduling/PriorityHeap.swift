/// A binary min-heap ordered by a caller-supplied "comes first" predicate.
struct PriorityHeap<Element> {
    private var storage: [Element] = []
    private let comesFirst: @Sendable (Element, Element) -> Bool

    /// Creates an empty heap; `comesFirst(a, b)` is true when `a` must leave before `b`.
    init(comesFirst: @escaping @Sendable (Element, Element) -> Bool) {
        self.comesFirst = comesFirst
    }

    var isEmpty: Bool { storage.isEmpty }
    var count: Int { storage.count }
    /// The element that leaves next, without removing it.
    var first: Element? { storage.first }

    mutating func insert(_ element: Element) {
        storage.append(element)
        siftUp(storage.count - 1)
    }

    @discardableResult
    mutating func popFirst() -> Element? {
        guard !storage.isEmpty else { return nil }
        storage.swapAt(0, storage.count - 1)
        let element = storage.removeLast()
        if !storage.isEmpty { siftDown(0) }
        return element
    }

    /// Removes every element matching `predicate` and returns them (O(n); used on revoke only).
    mutating func removeAll(where predicate: (Element) -> Bool) -> [Element] {
        let removed = storage.filter(predicate)
        guard !removed.isEmpty else { return [] }
        storage.removeAll(where: predicate)
        for index in stride(from: storage.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        return removed
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard comesFirst(storage[child], storage[parent]) else { return }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < storage.count else { return }
            var candidate = left
            let right = left + 1
            if right < storage.count && comesFirst(storage[right], storage[left]) { candidate = right }
            guard comesFirst(storage[candidate], storage[parent]) else { return }
            storage.swapAt(candidate, parent)
            parent = candidate
        }
    }
}

extension PriorityHeap: Sendable where Element: Sendable {}
