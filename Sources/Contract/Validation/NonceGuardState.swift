/// The mutable core of `NonceGuard`: a hash map plus an insertion-ordered queue for expiry.
struct NonceGuardState {
    private struct Entry {
        var expiresAtMs: Int64
        var requestTag: UInt64
    }

    private struct QueueItem {
        var digest: Digest256
        var expiresAtMs: Int64
    }

    private var entries: [Digest256: Entry] = [:]
    private var queue: [QueueItem] = []
    private var head = 0
    private(set) var evictedBeforeHorizon = 0

    var count: Int { entries.count }

    mutating func checkAndRecord(_ digest: Digest256, requestTag: UInt64, nowMs: Int64, horizonMs: Int64,
                                 maxEntries: Int) -> NonceCheck {
        expire(nowMs: nowMs)
        if let entry = entries[digest], entry.expiresAtMs > nowMs {
            return entry.requestTag == requestTag ? .repeatedBySameRequest : .reused
        }
        let expiresAt = nowMs + horizonMs
        entries[digest] = Entry(expiresAtMs: expiresAt, requestTag: requestTag)
        queue.append(QueueItem(digest: digest, expiresAtMs: expiresAt))
        while entries.count > maxEntries, head < queue.count {
            let oldest = queue[head]
            head += 1
            if entries[oldest.digest]?.expiresAtMs == oldest.expiresAtMs {
                entries.removeValue(forKey: oldest.digest)
                evictedBeforeHorizon += 1
            }
        }
        compact()
        return .fresh
    }

    private mutating func expire(nowMs: Int64) {
        while head < queue.count, queue[head].expiresAtMs <= nowMs {
            let item = queue[head]
            head += 1
            if entries[item.digest]?.expiresAtMs == item.expiresAtMs {
                entries.removeValue(forKey: item.digest)
            }
        }
        compact()
    }

    private mutating func compact() {
        if head > 1024, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }
}
