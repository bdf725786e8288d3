/// When each reconciliation attempt runs: attempt n waits `delaysMs[n-1]` after the previous
/// indeterminate answer (default 2 s, 10 s, 60 s, 5 min); after the last one the job is exhausted.
public struct ReconcileTiers: Sendable, Hashable {
    /// Delay before each attempt, in order.
    public var delaysMs: [Int64]

    /// Creates tiers; an empty list is replaced by the default.
    public init(delaysMs: [Int64] = [2_000, 10_000, 60_000, 300_000]) {
        self.delaysMs = delaysMs.isEmpty ? [2_000, 10_000, 60_000, 300_000] : delaysMs
    }

    /// The due time of `attempt` (1-based) scheduled at `nowMs`, or nil when attempts are exhausted.
    public func dueTime(attempt: Int, scheduledAtMs nowMs: Int64) -> Int64? {
        guard attempt >= 1, attempt <= delaysMs.count else { return nil }
        return nowMs.clampedAdding(delaysMs[attempt - 1])
    }

    /// Number of attempts before giving up.
    public var maximumAttempts: Int { delaysMs.count }
}
