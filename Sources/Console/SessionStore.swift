import Contract
import Synchronization

/// Sessions by their cookie value (32 random bytes, hex), each with its own CSRF token; bounded
/// in number and in time. Thread-safe; time is passed in.
public final class SessionStore: Sendable {
    /// The cookie's name: `__Host-`, so browsers accept it only `Secure`, for `Path=/`, without a
    /// `Domain` (no sibling host can set or shadow it).
    public static let cookieName = "__Host-console_session"
    private let sessions = Mutex<[String: ConsoleSession]>([:])
    private let lifetimeMs: Int64
    private let capacity: Int

    /// Creates a store whose sessions last `lifetimeMs`; beyond `capacity` the oldest is dropped.
    public init(lifetimeMs: Int64, capacity: Int = 1_000) {
        self.lifetimeMs = lifetimeMs
        self.capacity = capacity
    }

    /// Starts a session for `token`; returns the cookie value and the session.
    public func create(for token: ConsoleToken, nowMs: Int64) -> (id: String, session: ConsoleSession) {
        let id = Self.randomHex()
        let session = ConsoleSession(name: token.name, role: token.role, csrfToken: Self.randomHex(), expiresAtMs: nowMs + lifetimeMs)
        sessions.withLock { table in
            table = table.filter { $0.value.expiresAtMs > nowMs }
            while table.count >= capacity, let oldest = table.min(by: { $0.value.expiresAtMs < $1.value.expiresAtMs }) {
                table[oldest.key] = nil
            }
            table[id] = session
        }
        return (id, session)
    }

    /// The live session with cookie value `id`, if any.
    public func session(_ id: String?, nowMs: Int64) -> ConsoleSession? {
        guard let id, id.utf8.count == 64 else { return nil }
        return sessions.withLock { table in
            guard let session = table[id] else { return nil }
            guard session.expiresAtMs > nowMs else {
                table[id] = nil
                return nil
            }
            return session
        }
    }

    /// Ends the session with cookie value `id`.
    public func end(_ id: String?) {
        guard let id else { return }
        _ = sessions.withLock { $0.removeValue(forKey: id) }
    }

    /// Live sessions (for tests and the log).
    public func count(nowMs: Int64) -> Int { sessions.withLock { $0.values.filter { $0.expiresAtMs > nowMs }.count } }

    /// Whether `presented` is the session's CSRF token (constant time).
    public static func csrfMatches(_ presented: String?, session: ConsoleSession) -> Bool {
        guard let presented, !presented.isEmpty else { return false }
        return ConstantTime.equal(presented, session.csrfToken)
    }

    static func randomHex() -> String {
        Crypto.randomBytes(32).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
    }
}
