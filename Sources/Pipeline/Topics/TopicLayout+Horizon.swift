import Contract

extension TopicLayout {
    /// Warnings for topics whose retention is shorter than the duplicate horizon: the markers
    /// topic is where a worker reads back the requests answered within the horizon, so what its
    /// retention deletes earlier is no longer recognised as a duplicate after a restart or
    /// rebalance. A topic without `retention.ms` (the broker default) or with -1 (forever) passes.
    public func horizonIssues(horizonMs: Int64) -> [ConfigurationIssue] {
        var issues: [ConfigurationIssue] = []
        for role in [TopicRole.markers] {
            guard let text = topics[role]?.configs["retention.ms"], let retention = Int64(text), retention >= 0 else { continue }
            if retention < horizonMs {
                issues.append(.init(.warning, "topics.\(role.rawValue).configs.retention.ms",
                                    "is \(retention) ms, shorter than duplicates.horizon_seconds (\(horizonMs / 1000) s): answered requests older than the retention are not recognised as duplicates after a restart or rebalance"))
            }
        }
        return issues
    }
}
