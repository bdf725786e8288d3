/// Timestamps of a result (epoch milliseconds; written as RFC 3339 UTC with milliseconds).
public struct ResultTiming: Sendable, Hashable {
    /// Start of the request window.
    public var windowStartMs: Int64?
    /// The effective deadline.
    public var deadlineMs: Int64?
    /// When the worker received the request.
    public var receivedAtMs: Int64?
    /// How long the issuer call took, when one was made.
    public var issuerMs: Int64?
    /// When the result was published (set just before encoding).
    public var publishedAtMs: Int64?

    /// Creates timing.
    public init(windowStartMs: Int64? = nil, deadlineMs: Int64? = nil, receivedAtMs: Int64? = nil,
                issuerMs: Int64? = nil, publishedAtMs: Int64? = nil) {
        self.windowStartMs = windowStartMs
        self.deadlineMs = deadlineMs
        self.receivedAtMs = receivedAtMs
        self.issuerMs = issuerMs
        self.publishedAtMs = publishedAtMs
    }

    /// Timing from a request window.
    public init(window: RequestWindow, receivedAtMs: Int64, issuerMs: Int64? = nil, publishedAtMs: Int64? = nil) {
        self.init(windowStartMs: window.startMs, deadlineMs: window.deadlineMs, receivedAtMs: receivedAtMs,
                  issuerMs: issuerMs, publishedAtMs: publishedAtMs)
    }
}
