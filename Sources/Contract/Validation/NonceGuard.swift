import Synchronization

/// Remembers Apple nonces so each is used once (CONTRACT section 9, `nonce_reused`).
///
/// Only SHA-256 digests are stored, never the nonce. Entries expire after `horizonMs`; when more
/// than `maxEntries` are live the oldest are forgotten early (counted in `evictedBeforeHorizon`, a
/// number worth a metric). Thread-safe; O(1) amortized per call. The horizon must exceed the
/// longest request window plus clock skew: a nonce older than that belongs to an expired request.
public final class NonceGuard: Sendable {
    /// How long a nonce is remembered.
    public let horizonMs: Int64
    /// The most nonces remembered at once.
    public let maxEntries: Int
    private let state = Mutex(NonceGuardState())

    /// Creates a guard; the defaults remember five minutes, at most one million nonces (~130 MB).
    public init(horizonMs: Int64 = 5 * 60 * 1000, maxEntries: Int = 1_000_000) {
        self.horizonMs = max(1, horizonMs)
        self.maxEntries = max(1, maxEntries)
    }

    /// Checks whether `nonce` was seen inside the horizon and records it if not.
    public func checkAndRecord(_ nonce: Sensitive, requestID: String, nowMs: Int64) -> NonceCheck {
        let digest = Digest256(Crypto.sha256(utf8: nonce.revealed))
        let requestTag = Digest256(Crypto.sha256(utf8: requestID)).words.0
        return state.withLock {
            $0.checkAndRecord(digest, requestTag: requestTag, nowMs: nowMs, horizonMs: horizonMs, maxEntries: maxEntries)
        }
    }

    /// How many nonces are remembered now.
    public var count: Int { state.withLock { $0.count } }

    /// How many nonces were forgotten before their horizon because `maxEntries` was reached.
    public var evictedBeforeHorizon: Int { state.withLock { $0.evictedBeforeHorizon } }
}
