/// Why an HTTP exchange produced no complete answer, and whether the peer may have seen the request.
///
/// `HTTPClient` never retries; the caller decides from `requestMayHaveBeenSent` whether a retry is
/// safe (never sent) or whether the outcome must be reconciled first (may have been sent).
public struct HTTPTransportError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// Name resolution or TCP connect failed, or the connect timeout ran out before the
        /// connection was ready.
        case connectFailed
        /// The exchange's time budget ran out.
        case timedOut
        /// The connection broke (reset, closed, empty reply) after the request started to go out.
        case connectionLost
        /// The response body was larger than the request's `maxResponseBytes`.
        case responseTooLarge
        /// The request could not be sent as given (bad URL, scheme, method or header).
        case invalidRequest
        /// TLS failed: handshake, certificate verification or CA bundle.
        case tls
        /// Anything else, including the client being shut down.
        case other
    }

    /// The kind of failure.
    public var kind: Kind
    /// False only when the request provably never left: name resolution failed, the TCP or TLS
    /// connection was never ready, or the request was rejected before sending.
    public var requestMayHaveBeenSent: Bool
    /// What happened and what to do about it; never holds the URL's path or query.
    public var message: String
    /// Milliseconds from `execute` to the failure.
    public var elapsedMs: Double

    /// Creates a transport error.
    public init(kind: Kind, requestMayHaveBeenSent: Bool, message: String, elapsedMs: Double) {
        self.kind = kind
        self.requestMayHaveBeenSent = requestMayHaveBeenSent
        self.message = message
        self.elapsedMs = elapsedMs
    }

    /// `kind`, whether the request may have been sent, and the message, on one line.
    public var description: String {
        "HTTP \(kind) (request \(requestMayHaveBeenSent ? "may have been sent" : "not sent")) after \(Int(elapsedMs)) ms: \(message)"
    }
}
