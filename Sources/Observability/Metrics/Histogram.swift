import Synchronization

/// Observations counted into fixed buckets (Prometheus `histogram`), with quantile estimates.
public final class Histogram: Sendable {
    /// Upper bounds of the buckets, ascending (`+Inf` is implicit).
    public let upperBounds: [Double]
    private let state: Mutex<State>

    struct State {
        var counts: [Int]
        var sum: Double = 0
        var count = 0
    }

    init(upperBounds: [Double]) {
        self.upperBounds = upperBounds.sorted()
        self.state = Mutex(State(counts: Array(repeating: 0, count: upperBounds.count + 1)))
    }

    /// Records one observation.
    public func observe(_ value: Double) {
        var index = upperBounds.count
        var low = 0
        var high = upperBounds.count - 1
        while low <= high {
            let middle = (low + high) / 2
            if value <= upperBounds[middle] { index = middle; high = middle - 1 } else { low = middle + 1 }
        }
        state.withLock { state in
            state.counts[index] += 1
            state.sum += value
            state.count += 1
        }
    }

    /// Number of observations.
    public var count: Int { state.withLock { $0.count } }
    /// Sum of observations.
    public var sum: Double { state.withLock { $0.sum } }

    /// Cumulative counts per bucket (the last is `+Inf`).
    var cumulativeCounts: [Int] {
        state.withLock { state in
            var running = 0
            return state.counts.map { running += $0; return running }
        }
    }

    /// The bucket upper bound at or above quantile `q` (0...1): a conservative estimate.
    public func quantileUpperBound(_ q: Double) -> Double? {
        let cumulative = cumulativeCounts
        guard let total = cumulative.last, total > 0 else { return nil }
        let rank = Int((q * Double(total)).rounded(.up))
        for (index, count) in cumulative.enumerated() where count >= max(rank, 1) {
            return index < upperBounds.count ? upperBounds[index] : .infinity
        }
        return .infinity
    }

    /// Buckets for latencies in seconds (the Prometheus base unit), 1 ms to 30 s: the millisecond
    /// buckets divided by 1000, so both renderings of one latency fall in the same bucket.
    public static let latencySecondBuckets: [Double] = latencyMillisecondBuckets.map { $0 / 1_000 }

    /// Default buckets for latencies in milliseconds, 1 ms to 30 s (deprecated metric names only).
    public static let latencyMillisecondBuckets: [Double] = [
        1, 2, 5, 10, 20, 50, 100, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 10_000, 15_000, 19_000, 20_000, 30_000,
    ]
}
