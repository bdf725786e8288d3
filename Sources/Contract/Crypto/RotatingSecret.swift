/// One key of a list that rotates (replay keys, audit pseudonym keys): the id it is named by (nil
/// for the unnamed key), the secret, and when it retires.
public struct RotatingSecret: Sendable {
    /// The id the key is named by where it is used; nil for the unnamed key.
    public var id: String?
    /// The secret.
    public var secret: Sensitive
    /// When it retires (epoch ms): from then on nothing is made, checked or signed with it; nil: never.
    public var notAfterMs: Int64?

    /// Creates a key.
    public init(id: String?, secret: Sensitive, notAfterMs: Int64? = nil) {
        self.id = id
        self.secret = secret
        self.notAfterMs = notAfterMs
    }

    /// Whether it has retired at `nowMs`.
    public func isRetired(nowMs: Int64) -> Bool { notAfterMs.map { nowMs >= $0 } ?? false }
}
