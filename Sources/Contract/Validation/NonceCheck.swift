/// What `NonceGuard.checkAndRecord` found.
public enum NonceCheck: Sendable, Hashable {
    /// Never seen inside the horizon: recorded now; go ahead.
    case fresh
    /// Seen before with the same `request_id` (a redelivery of the same request, not a reuse).
    case repeatedBySameRequest
    /// Seen before with another `request_id`: reject with `nonce_reused`.
    case reused

    /// Whether the nonce was new.
    public var isFresh: Bool { self == .fresh }
}
