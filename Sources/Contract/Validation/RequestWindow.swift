/// The time a request has (CONTRACT section 3), in epoch milliseconds.
public struct RequestWindow: Sendable, Hashable {
    /// When the window started (`started_at`, else the record timestamp, never later than receipt).
    public var startMs: Int64
    /// The effective deadline: the earlier of `deadline` and start + the wallet's window.
    public var deadlineMs: Int64
    /// The result must be published by now: `deadlineMs` − reply margin.
    public var publishByMs: Int64

    /// Creates a window.
    public init(startMs: Int64, deadlineMs: Int64, publishByMs: Int64) {
        self.startMs = startMs
        self.deadlineMs = deadlineMs
        self.publishByMs = publishByMs
    }

    /// Milliseconds left until `publishByMs` (negative once past).
    public func remainingMs(now nowMs: Int64) -> Int64 {
        publishByMs - nowMs
    }
}
