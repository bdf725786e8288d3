/// One configured access token: a name (written into the `replayed` audit events and the
/// console's log), a role, and the salted hash of the token.
public struct ConsoleToken: Sendable, Hashable {
    /// Who holds it (`[A-Za-z0-9._:@-]`, 1-64: the audit event's `operator`).
    public var name: String
    /// What it may do.
    public var role: ConsoleRole
    /// The stored hash.
    public var hash: TokenHash

    /// Creates a token entry.
    public init(name: String, role: ConsoleRole, hash: TokenHash) {
        self.name = name
        self.role = role
        self.hash = hash
    }
}

/// The configured tokens: finds the entry a presented token belongs to.
public struct TokenBook: Sendable {
    /// Every entry.
    public let tokens: [ConsoleToken]

    /// Creates the book.
    public init(_ tokens: [ConsoleToken]) { self.tokens = tokens }

    /// The entry `token` matches, checking every entry (so the time does not say which matched);
    /// nil for an empty or unknown token.
    public func authenticate(_ token: String) -> ConsoleToken? {
        guard !token.isEmpty, token.utf8.count <= 1024 else { return nil }
        var found: ConsoleToken?
        for entry in tokens where entry.hash.matches(token) && found == nil { found = entry }
        return found
    }
}
