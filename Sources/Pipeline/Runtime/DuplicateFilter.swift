import Synchronization

/// Remembers request ids in flight on this worker and those finished within a horizon, so a
/// duplicate delivery is not sent to the issuer again (audit `duplicate_ignored`).
final class DuplicateFilter: Sendable {
    /// What the filter knows of a request id.
    enum Verdict: Sendable, Equatable { case fresh, inFlight, completed }

    private struct State {
        var inFlight: Set<String> = []
        var completed: [String: Int64] = [:]
        var order = FIFOQueue<(id: String, expiresAtMs: Int64)>()
        var evictedBeforeHorizon = 0
    }

    private let horizonMs: Int64
    private let maxEntries: Int
    private let state = Mutex(State())

    init(horizonMs: Int64, maxEntries: Int = 1_000_000) {
        self.horizonMs = horizonMs
        self.maxEntries = maxEntries
    }

    /// Claims `requestID` for processing unless it is in flight or recently completed.
    func begin(_ requestID: String, nowMs: Int64) -> Verdict {
        state.withLock { state in
            evict(&state, nowMs: nowMs)
            if state.inFlight.contains(requestID) { return .inFlight }
            if let expiry = state.completed[requestID], expiry > nowMs { return .completed }
            state.inFlight.insert(requestID)
            return .fresh
        }
    }

    /// The request reached its final handling here: later copies are duplicates.
    func finish(_ requestID: String, nowMs: Int64) {
        state.withLock { state in
            state.inFlight.remove(requestID)
            let expiry = nowMs + horizonMs
            state.completed[requestID] = expiry
            state.order.append((requestID, expiry))
            evict(&state, nowMs: nowMs)
        }
    }

    /// The request was given up without an answer (revoked, dead-lettered): a later copy is new work.
    func release(_ requestID: String) {
        _ = state.withLock { $0.inFlight.remove(requestID) }
    }

    /// Entries held (metrics).
    var count: Int { state.withLock { $0.completed.count + $0.inFlight.count } }

    /// Finished ids forgotten before their horizon because more than `maxEntries` were held
    /// (metrics: a flood of fresh ids pushes real ones out, and their duplicates would pass).
    var evictedBeforeHorizon: Int { state.withLock { $0.evictedBeforeHorizon } }

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
