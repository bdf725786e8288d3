import Synchronization

/// Remembers Apple nonces so each is used once (CONTRACT section 9, `nonce_reused`).
///
/// Scoped by program (CONTRACT section 12): a nonce is remembered as "used by request R of program
/// P", and only another request of P that carries it is `reused`. The nonce is the wallet
/// handshake's, and a handshake is sent to the one issuer the program names; what this guard
/// protects is a program's issuer receiving one handshake twice. Across programs it cannot judge
/// who is genuine: the handshake travels in clear on the requests topic, so a message under an
/// unsigned program Q copying it would otherwise spend it first and make program P's genuine,
/// signed request `nonce_reused`. A nonce that does reach two programs' issuers is refused by them
/// (Apple's nonces are single-use per device handshake), not here.
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

    /// Checks whether `nonce` was seen inside the horizon for a request of `identity`'s program,
    /// and records it for `identity` if not.
    public func checkAndRecord(_ nonce: Sensitive, identity: RequestIdentity, nowMs: Int64) -> NonceCheck {
        var scoped = LengthPrefixedFields(capacity: identity.program.utf8.count + nonce.revealed.utf8.count + 8)
        scoped.append(identity.program)
        scoped.append(nonce.revealed)
        let digest = Digest256(Crypto.sha256(scoped.bytes))
        let requestTag = Digest256(Crypto.sha256(utf8: identity.requestID)).words.0
        return state.withLock {
            $0.checkAndRecord(digest, requestTag: requestTag, nowMs: nowMs, horizonMs: horizonMs, maxEntries: maxEntries)
        }
    }

    /// How many nonces are remembered now.
    public var count: Int { state.withLock { $0.count } }

    /// How many nonces were forgotten before their horizon because `maxEntries` was reached.
    public var evictedBeforeHorizon: Int { state.withLock { $0.evictedBeforeHorizon } }
}
