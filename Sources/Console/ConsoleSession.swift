/// A logged-in browser: who, with which role, its CSRF token, and when it ends.
public struct ConsoleSession: Sendable, Hashable {
    /// The token's name.
    public var name: String
    /// The token's role.
    public var role: ConsoleRole
    /// The value every state-changing request must carry (form field `csrf` or header `X-CSRF-Token`).
    public var csrfToken: String
    /// When the session ends (epoch ms).
    public var expiresAtMs: Int64
}
