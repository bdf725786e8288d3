import Contract
import Kafka
import Synchronization

/// Remembers requests in flight on this worker and those finished within a horizon, so a
/// duplicate delivery is not sent to the issuer again (audit `duplicate_ignored`). Keyed by
/// `RequestIdentity` (program, request id): a message naming another program never claims,
/// finishes or waits for this program's request with the same `request_id` (CONTRACT section 12).
///
/// An identity in flight is held by one delivery: its partition and that partition's ledger generation
/// (`Owner`). A copy delivered under another owner — typically the same partition redelivered to
/// this process after a revoke and re-assignment, while the older generation's attempt has not
/// yet given up — is not a duplicate to drop: that attempt may still give up ("the new owner
/// redoes the request"). The copy waits (`awaitingOlderAttempt`) and is looked at again when the
/// holder ends: a duplicate if it finished, admitted if it gave up.
final class DuplicateFilter: Sendable {
    /// What the filter knows of a request id.
    enum Verdict: Sendable, Equatable {
        case fresh, inFlight, completed
        /// Held in flight by another delivery (another generation or partition): `whenSettled`
        /// runs once that attempt finishes or gives up; ask again then.
        case awaitingOlderAttempt
    }

    /// The delivery holding a request id in flight.
    struct Owner: Sendable, Hashable {
        var partition: TopicPartition
        var generation: UInt64
    }

    private struct State {
        var inFlight: [RequestIdentity: Owner] = [:]
        var waiters: [RequestIdentity: [@Sendable () -> Void]] = [:]
        var completed: [RequestIdentity: Int64] = [:]
        var order = FIFOQueue<(id: RequestIdentity, expiresAtMs: Int64)>()
        var evictedBeforeHorizon = 0
    }

    private let horizonMs: Int64
    private let maxEntries: Int
    private let state = Mutex(State())

    init(horizonMs: Int64, maxEntries: Int = 1_000_000) {
        self.horizonMs = horizonMs
        self.maxEntries = maxEntries
    }

    /// Claims `identity` for `owner` unless it is in flight or recently completed; when another
    /// owner holds it, `whenSettled` runs (once, outside the lock) as that owner finishes or gives up.
    func begin(_ identity: RequestIdentity, owner: Owner, nowMs: Int64, whenSettled: @escaping @Sendable () -> Void = {}) -> Verdict {
        state.withLock { state in
            evict(&state, nowMs: nowMs)
            if let holder = state.inFlight[identity] {
                if holder == owner { return .inFlight }
                state.waiters[identity, default: []].append(whenSettled)
                return .awaitingOlderAttempt
            }
            if let expiry = state.completed[identity], expiry > nowMs { return .completed }
            state.inFlight[identity] = owner
            return .fresh
        }
    }

    /// The request reached its final handling here: later copies are duplicates.
    func finish(_ identity: RequestIdentity, owner: Owner, nowMs: Int64) {
        let waiters = state.withLock { state -> [@Sendable () -> Void] in
            let expiry = nowMs + horizonMs
            state.completed[identity] = expiry
            state.order.append((identity, expiry))
            evict(&state, nowMs: nowMs)
            return Self.end(&state, identity, owner: owner)
        }
        waiters.forEach { $0() }
    }

    /// `owner` gave the request up without an answer (revoked, not written): a later copy is new
    /// work. A release by an owner that no longer holds the identity changes nothing.
    func release(_ identity: RequestIdentity, owner: Owner) {
        let waiters = state.withLock { Self.end(&$0, identity, owner: owner) }
        waiters.forEach { $0() }
    }

    /// Entries held (metrics).
    var count: Int { state.withLock { $0.completed.count + $0.inFlight.count } }

    /// Finished ids forgotten before their horizon because more than `maxEntries` were held
    /// (metrics: a flood of fresh ids pushes real ones out, and their duplicates would pass).
    var evictedBeforeHorizon: Int { state.withLock { $0.evictedBeforeHorizon } }

    private static func end(_ state: inout State, _ identity: RequestIdentity, owner: Owner) -> [@Sendable () -> Void] {
        guard state.inFlight[identity] == owner else { return [] }
        state.inFlight[identity] = nil
        return state.waiters.removeValue(forKey: identity) ?? []
    }

    private func evict(_ state: inout State, nowMs: Int64) {
        while let first = state.order.first, first.expiresAtMs <= nowMs || state.order.count > maxEntries {
            state.order.popFirst()
            if state.completed[first.id] == first.expiresAtMs {
                state.completed[first.id] = nil
                if first.expiresAtMs > nowMs { state.evictedBeforeHorizon += 1 }
            }
        }
    }
}

extension DuplicateFilter.Owner {
    /// The delivery `origin` describes.
    init(_ origin: RecordOrigin) {
        self.init(partition: origin.partition, generation: origin.generation)
    }
}
