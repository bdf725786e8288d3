/// A worker's share of the group-wide program limits, from the request partitions it owns.
///
/// A program's `rate_limit` and `max_in_flight` are the group's: each worker takes
/// `limit × owned / total`, recomputed on every rebalance. Floors keep a worker that owns at least
/// one partition able to work: one call slot and one token of burst. Burst never exceeds the
/// group's bucket. See docs/CONFIGURATION.md "Limits shared by assignment" for the error bound.
public struct LimitShare: Sendable, Equatable {
    /// Request partitions this worker owns.
    public var owned: Int
    /// Request partitions of the topic (the group's whole).
    public var total: Int

    /// Creates a share of `owned` partitions out of `total` (a total below `owned` counts as `owned`).
    public init(owned: Int, total: Int) {
        self.owned = max(0, owned)
        self.total = max(self.owned, total, 1)
    }

    /// The whole group's limits (one worker owning every partition; also the share when limits are per worker).
    public static let whole = LimitShare(owned: 1, total: 1)

    /// `owned / total`, 0 to 1.
    public var fraction: Double { Double(owned) / Double(total) }

    /// This worker's token bucket for a group-wide `limit`: the rate times the fraction, and the
    /// burst times the fraction (at least one token, at most the group's burst).
    public func rate(_ limit: SchedulerSettings.RateLimit) -> SchedulerSettings.RateLimit {
        let burst = min(limit.burst, max(1, limit.burst * fraction))
        // A worker owning nothing starts nothing; a bucket still needs a positive rate.
        return .init(perSecond: max(limit.perSecond * fraction, 0.000_001), burst: burst)
    }

    /// This worker's calls in flight for a group-wide bulkhead of `limit`: rounded down, at least
    /// one while it owns a partition (zero when it owns none), never above `limit`.
    public func concurrency(_ limit: Int) -> Int {
        guard limit != .max else { return .max }
        guard owned > 0 else { return 0 }
        let share = Int((Double(limit) * fraction).rounded(.down))
        return min(limit, max(1, share))
    }
}
