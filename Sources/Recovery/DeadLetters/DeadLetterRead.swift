/// What one read of a dead-letter topic found (`DeadLetterStore.read`), and what it cost: how many
/// records it looked at and the most entries it held at once (bounded by the filter's limit).
public struct DeadLetterRead: Sendable {
    /// The matching entries: the newest `limit` of them when the filter has a limit, oldest first.
    public var entries: [DeadLetterEntry]
    /// Records read from the topic (matching or not).
    public var scanned: Int
    /// The most entries held at any moment of the read (never more than the limit).
    public var peakRetained: Int
    /// The most bytes those entries held at once (`DeadLetterEntry.retainedBytes`: summaries, not bodies).
    public var peakRetainedBytes: Int

    /// Creates a read result.
    public init(entries: [DeadLetterEntry], scanned: Int, peakRetained: Int, peakRetainedBytes: Int = 0) {
        self.entries = entries
        self.scanned = scanned
        self.peakRetained = peakRetained
        self.peakRetainedBytes = peakRetainedBytes
    }
}
