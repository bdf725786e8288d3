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
/// is made outside the lock, by one caller at a time: the others meanwhile judge by the cached
/// counts, and a topic those lack is not refused while the request that may list it is under way.
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
    }

    private let lookup: Lookup
    private let clock: @Sendable () -> Int64
    private let refreshMs: Int64
    private let ttlMs: Int64
    private let state = Mutex(State())

    init(refreshMs: Int64 = 1_000, ttlMs: Int64 = 60_000, clock: @escaping @Sendable () -> Int64, lookup: @escaping Lookup) {
        self.refreshMs = refreshMs
        self.ttlMs = ttlMs
        self.clock = clock
        self.lookup = lookup
    }

    /// Why results cannot go to `partition` (nil: the partition `request_id` hashes to) of `topic`,
    /// or nil when they can (or metadata cannot tell). Blocks for a metadata request when the cached
    /// answer is older than `ttlMs`, or does not know `topic` and is older than `refreshMs`.
    func problem(topic: String, partition: Int32?) -> String? {
        let now = clock()
        let due = state.withLock { state -> Bool in
            let age = state.fetchedAtMs.map { now - $0 } ?? .max
            guard !state.fetching, age >= ttlMs || (state.counts[topic] == nil && age >= refreshMs) else { return false }
            state.fetching = true
            return true
        }
        let fetched = due ? lookup() : nil
        let count: Int?? = state.withLock { state in
            if due {
                if let fetched { state.counts = fetched }
                state.isCurrent = fetched != nil
                state.fetchedAtMs = now
                state.fetching = false
            }
            // Metadata not read, or being read by another caller: a name it lacks is not judged missing.
            return state.counts[topic] ?? (state.isCurrent && !state.fetching ? nil : .some(nil))
        }
        guard let listed = count else {
            return "the reply topic named by \(ReplyRoute.topicHeader) does not exist in the cluster"
        }
        guard let partitions = listed, let partition, Int(partition) >= partitions else { return nil }
        return "\(ReplyRoute.partitionHeader) \(partition) is not a partition of the reply topic (it has \(partitions))"
    }
}
