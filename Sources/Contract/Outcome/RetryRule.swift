/// Whether the issuer client may send the same request again after an answer.
public enum RetryRule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Never: the issuer may have processed it, or repeating cannot help.
    case never
    /// Allowed only because the issuer provably did not process it (not sent, 429, 503).
    case ifNotSent = "if_not_sent"
    /// Allowed even though it may have been processed: the handshake is reusable (Legacy Google Pay).
    case sameHandshakeAllowed = "same_handshake_allowed"

    /// The wire name.
    public var description: String { rawValue }
}
