import Contract
import Synchronization

/// Whether a reply route names a topic and partition the cluster has. A route
/// to a topic that does not exist (a made-up name under an allowed `*` prefix) or to a partition
/// past the topic's end would make every publish attempt wait `message.timeout.ms` (~30 s) and
/// hold the partition's commits meanwhile; refused at intake instead (`invalid_request` on the
/// default results topic), before anything is claimed or called.
///
/// Partition counts come from one cluster metadata request (`lookup`), kept `ttlMs`; a topic not
/// in it is looked up again at most once per `refreshMs`, so made-up names cost at most one
/// metadata request a second. When metadata cannot be read, routes are not refused (the publish
/// then fails as before): a broker hiccup must not reject genuine requests. The metadata request
/// is made outside the state lock, by one caller at a time (`fetchLock`): a caller whose topic is
/// in the cached counts judges by them meanwhile; a caller whose topic is not waits for that
/// request's answer and is judged by it, so no route passes unchecked because of a look-up in flight.
final class ReplyTopicCheck: Sendable {
    /// Topic → partition count (nil: listed with an error, such as not authorized); nil when the
    /// metadata could not be read.
    typealias Lookup = @Sendable () -> [String: Int?]?

    private struct State {
        var counts: [String: Int?] = [:]
        var fetchedAtMs: Int64?
        /// Whether the last metadata request was answered (else a name it lacks may exist).
        var isCurrent = false
        /// Whether a caller is making a metadata request now.
        var fetching = false

        func isDue(topic: String, nowMs: Int64, ttlMs: Int64, refreshMs: Int64) -> Bool {
            let age = fetchedAtMs.map { nowMs - $0 } ?? .max
            return age >= ttlMs || (counts[topic] == nil && age >= refreshMs)
        }
    }

    private let lookup: Lookup
    private let clock: @Sendable () -> Int64
    private let refreshMs: Int64
    private let ttlMs: Int64
    private let state = Mutex(State())
    /// Held by the caller making the metadata request, for as long as it runs.
    private let fetchLock = Mutex(())

    init(refreshMs: Int64 = 1_000, ttlMs: Int64 = 60_000, clock: @escaping @Sendable () -> Int64, lookup: @escaping Lookup) {
        self.refreshMs = refreshMs
        self.ttlMs = ttlMs
        self.clock = clock
        self.lookup = lookup
    }

    /// Why results cannot go to `partition` (nil: the partition `request_id` hashes to) of `topic`,
    /// or nil when they can (or metadata cannot tell). Blocks for a metadata request when the cached
    /// answer is older than `ttlMs`, or does not know `topic` and is older than `refreshMs`, and,
    /// when it does not know `topic`, for a metadata request another caller has under way.
    func problem(topic: String, partition: Int32?) -> String? {
        let now = clock()
        enum Step { case judge, fetch, waitForFetch }
        let step = state.withLock { state -> Step in
            let due = state.isDue(topic: topic, nowMs: now, ttlMs: ttlMs, refreshMs: refreshMs)
            if state.counts[topic] != nil {
                // Known: a stale count serves while another caller refreshes it.
                guard due, !state.fetching else { return .judge }
                state.fetching = true
                return .fetch
            }
            return due || state.fetching ? .waitForFetch : .judge
        }
        if step != .judge {
            fetchLock.withLock { _ in
                if step == .waitForFetch {
                    // Another caller's request may have answered while this one waited.
                    let due = state.withLock { state -> Bool in
                        guard state.isDue(topic: topic, nowMs: now, ttlMs: ttlMs, refreshMs: refreshMs) else { return false }
                        state.fetching = true
                        return true
                    }
                    guard due else { return }
                }
                let fetched = lookup()
                state.withLock { state in
                    if let fetched { state.counts = fetched }
                    state.isCurrent = fetched != nil
                    state.fetchedAtMs = max(now, state.fetchedAtMs ?? now)
                    state.fetching = false
                }
            }
        }
        let count: Int?? = state.withLock { state in
            // Metadata not read: a name it lacks is not judged missing.
            state.counts[topic] ?? (state.isCurrent ? nil : .some(nil))
        }
        guard let listed = count else {
            return "the reply topic named by \(ReplyRoute.topicHeader) does not exist in the cluster"
        }
        guard let partitions = listed, let partition, Int(partition) >= partitions else { return nil }
        return "\(ReplyRoute.partitionHeader) \(partition) is not a partition of the reply topic (it has \(partitions))"
    }
}
