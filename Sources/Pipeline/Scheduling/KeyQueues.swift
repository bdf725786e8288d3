/// The scheduler's per-key ordering: one ticket per key is ready or running at a time; the others
/// wait behind it in arrival order, each (when tracked) only until its latest start.
struct KeyQueues<Payload: Sendable>: Sendable {
    private var waiting: [String: FIFOQueue<SchedulerTicket<Payload>>] = [:]
    private var busy: Set<String> = []
    private var expiry = PriorityHeap<(at: Int64, id: UInt64, key: String)>(comesFirst: { $0.at < $1.at })

    /// Whether `ticket` takes its key now (it is ready); otherwise it waits behind the key, and
    /// with `tracksExpiry` only until its latest start (`expire`).
    mutating func admit(_ ticket: SchedulerTicket<Payload>, tracksExpiry: Bool) -> Bool {
        guard busy.contains(ticket.key) else {
            busy.insert(ticket.key)
            return true
        }
        waiting[ticket.key, default: FIFOQueue()].append(ticket)
        if tracksExpiry { expiry.insert((ticket.latestStartMs, ticket.id, ticket.key)) }
        return false
    }

    /// The key's current ticket is gone: the next one waiting behind it, which takes the key and
    /// is ready now; nil when none waits (the key is free).
    mutating func release(_ key: String) -> SchedulerTicket<Payload>? {
        guard var queue = waiting[key], let next = queue.popFirst() else {
            busy.remove(key)
            return nil
        }
        waiting[key] = queue.isEmpty ? nil : queue
        return next
    }

    /// Removes and returns the tracked waiters whose latest start is before `nowMs`, in the order
    /// of their latest starts.
    mutating func expire(nowMs: Int64) -> [SchedulerTicket<Payload>] {
        var gone: [SchedulerTicket<Payload>] = []
        while let first = expiry.first, first.at < nowMs {
            expiry.popFirst()
            guard var queue = waiting[first.key] else { continue }
            gone += queue.removeAll { $0.id == first.id }
            waiting[first.key] = queue.isEmpty ? nil : queue
        }
        return gone
    }

    /// The earliest latest start of a tracked waiter.
    var nextExpiryMs: Int64? { expiry.first?.at }

    /// Removes and returns the waiting tickets matching `predicate` (each key stays with its
    /// current ticket).
    mutating func removeWaiting(where predicate: (SchedulerTicket<Payload>) -> Bool) -> [SchedulerTicket<Payload>] {
        var removed: [SchedulerTicket<Payload>] = []
        for key in Array(waiting.keys) {
            removed += waiting[key]!.removeAll(where: predicate)
            if waiting[key]!.isEmpty { waiting[key] = nil }
        }
        return removed
    }
}
