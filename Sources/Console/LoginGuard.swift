import Synchronization

/// The sign-in form's defences.
///
/// - **Issued nonces.** Every login page carries a fresh nonce the console issued and remembers
///   (single use, `nonceLifetimeMs`, at most `maxNonces`); a sign-in must present one, both in the
///   form and in the `__Host-console_login` cookie. A page served from another port of the same
///   host shares the browser's cookie jar and can plant a cookie and a matching form value, but
///   it cannot read a nonce this console issued: it cannot sign an operator in under its own
///   token (login CSRF).
/// - **Throttling.** Sign-in attempts that reach the token check draw from one token bucket
///   (`burst`, then `ratePerSecond`) over all clients: guessing costs at most that many PBKDF2
///   rounds per configured token per second. An attempt over the limit is refused before any hash
///   is computed (429); a flood can delay operators' own sign-ins by as long as it lasts.
///
/// Thread-safe; time is passed in.
final class LoginGuard: Sendable {
    /// How long an issued nonce stays usable.
    static let nonceLifetimeMs: Int64 = 10 * 60 * 1000
    /// Nonces remembered at most (the oldest are forgotten first).
    static let maxNonces = 10_000
    /// Sign-in attempts allowed at once.
    static let burst = 10.0
    /// Sign-in attempts allowed per second after the burst.
    static let ratePerSecond = 1.0

    private struct State {
        var nonces: [String: Int64] = [:]
        var order: [(nonce: String, expiresAtMs: Int64)] = []
        var head = 0
        var tokens = LoginGuard.burst
        var refilledAtMs: Int64?
    }

    private let state = Mutex(State())

    /// A new nonce for a login page shown at `nowMs`.
    func issue(nowMs: Int64) -> String {
        let nonce = SessionStore.randomHex()
        state.withLock { state in
            Self.expire(&state, nowMs: nowMs)
            state.nonces[nonce] = nowMs + Self.nonceLifetimeMs
            state.order.append((nonce, nowMs + Self.nonceLifetimeMs))
            while state.nonces.count > Self.maxNonces, state.head < state.order.count {
                state.nonces[state.order[state.head].nonce] = nil
                state.head += 1
            }
        }
        return nonce
    }

    /// Whether `nonce` was issued here and is still unused and fresh at `nowMs`; it is used up either way.
    func consume(_ nonce: String, nowMs: Int64) -> Bool {
        state.withLock { state in
            Self.expire(&state, nowMs: nowMs)
            guard let expiry = state.nonces.removeValue(forKey: nonce) else { return false }
            return expiry > nowMs
        }
    }

    /// Whether one more sign-in attempt may be checked at `nowMs` (takes a token when it may).
    func admitAttempt(nowMs: Int64) -> Bool {
        state.withLock { state in
            let elapsed = Double(max(0, nowMs - (state.refilledAtMs ?? nowMs))) / 1000
            state.tokens = min(Self.burst, state.tokens + elapsed * Self.ratePerSecond)
            state.refilledAtMs = nowMs
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }

    private static func expire(_ state: inout State, nowMs: Int64) {
        while state.head < state.order.count, state.order[state.head].expiresAtMs <= nowMs {
            let item = state.order[state.head]
            if state.nonces[item.nonce] == item.expiresAtMs { state.nonces[item.nonce] = nil }
            state.head += 1
        }
        if state.head > 1_024, state.head * 2 > state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
    }
}
