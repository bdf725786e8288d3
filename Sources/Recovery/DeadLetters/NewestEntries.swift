/// The newest `capacity` dead-letter entries seen so far (newest by dead-lettering time, then
/// partition and offset), kept in a min-heap while a topic is read, so a read holds at most
/// `capacity` entries (values included) however long the topic is. Without a capacity it keeps all.
struct NewestEntries {
    private typealias Rank = (failedAtMs: Int64, partition: Int32, offset: Int64)

    let capacity: Int?
    private var heap: [(rank: Rank, entry: DeadLetterEntry)] = []
    /// The most entries held at once.
    private(set) var peak = 0
    /// The most bytes (`DeadLetterEntry.retainedBytes`) held at once.
    private(set) var peakBytes = 0
    private var bytes = 0

    init(capacity: Int?) {
        self.capacity = capacity.map { max(0, $0) }
    }

    private static func rank(_ entry: DeadLetterEntry) -> Rank {
        (entry.provenance?.failedAtMs ?? entry.timestampMs ?? 0, entry.partition, entry.offset)
    }

    /// Keeps `entry` if it is among the newest `capacity` so far (dropping the oldest kept one).
    mutating func insert(_ entry: DeadLetterEntry) {
        let rank = Self.rank(entry)
        defer {
            peak = max(peak, heap.count)
            peakBytes = max(peakBytes, bytes)
        }
        guard let capacity else {
            heap.append((rank, entry))
            bytes += entry.retainedBytes
            return
        }
        guard capacity > 0 else { return }
        if heap.count < capacity {
            heap.append((rank, entry))
            bytes += entry.retainedBytes
            siftUp(heap.count - 1)
        } else if heap[0].rank < rank {
            bytes += entry.retainedBytes - heap[0].entry.retainedBytes
            heap[0] = (rank, entry)
            siftDown(0)
        }
    }

    /// The kept entries, oldest first.
    func sorted() -> [DeadLetterEntry] {
        heap.sorted { $0.rank < $1.rank }.map(\.entry)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].rank < heap[parent].rank else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].rank < heap[smallest].rank { smallest = left }
            if right < heap.count && heap[right].rank < heap[smallest].rank { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
