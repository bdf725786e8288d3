/// Quantiles from cumulative histogram buckets, interpolated within a bucket the way PromQL's
/// `histogram_quantile` does.
public enum Quantile {
    /// The `q` quantile (0...1) of `buckets` (upper bound → cumulative count); nil when empty.
    public static func of(_ q: Double, buckets: [Double: Double]) -> Double? {
        let sorted = buckets.sorted { $0.key < $1.key }
        guard let total = sorted.last?.value, total > 0 else { return nil }
        let rank = q * total
        var lowerBound = 0.0
        var lowerCount = 0.0
        for (bound, count) in sorted {
            if count >= rank {
                if bound.isInfinite { return lowerBound }
                let inBucket = count - lowerCount
                guard inBucket > 0 else { return bound }
                return lowerBound + (bound - lowerBound) * (rank - lowerCount) / inBucket
            }
            lowerBound = bound
            lowerCount = count
        }
        return lowerBound
    }

    /// `later` minus `earlier`, bucket by bucket (counts since `earlier`); a worker restart
    /// (a count going down) gives `later` as it is.
    public static func difference(_ later: [Double: Double], _ earlier: [Double: Double]) -> [Double: Double] {
        var result: [Double: Double] = [:]
        for (bound, count) in later {
            let before = earlier[bound] ?? 0
            guard count >= before else { return later }
            result[bound] = count - before
        }
        return result
    }
}
