/// A first-in first-out queue with amortized O(1) push and pop (an array with a moving head).
struct FIFOQueue<Element> {
    private var storage: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }
    var count: Int { storage.count - head }
    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) { storage.append(element) }

    @discardableResult
    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes and returns the elements matching `predicate`, keeping the order of the rest.
    mutating func removeAll(where predicate: (Element) -> Bool) -> [Element] {
        let live = storage[head...]
        let removed = live.filter(predicate)
        guard !removed.isEmpty else { return [] }
        storage = live.filter { !predicate($0) }
        head = 0
        return removed
    }

    /// The queued elements, oldest first.
    var elements: ArraySlice<Element> { storage[head...] }
}

extension FIFOQueue: Sendable where Element: Sendable {}
