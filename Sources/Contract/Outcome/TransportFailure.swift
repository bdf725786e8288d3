/// How an issuer call failed below HTTP, by what the issuer may have seen.
public enum TransportFailure: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Provably never left: name resolution or TCP connect failed. Safe to retry.
    case notSent = "not_sent"
    /// Sent, then no answer before the timeout: the issuer may have applied it.
    case timedOutAfterSend = "timed_out_after_send"
    /// Sent, then the connection broke before an answer: the issuer may have applied it.
    case connectionLostAfterSend = "connection_lost_after_send"
    /// Not sent because the deadline budget ran out first.
    case abandonedBeforeSend = "abandoned_before_send"

    /// The wire name.
    public var description: String { rawValue }
}
