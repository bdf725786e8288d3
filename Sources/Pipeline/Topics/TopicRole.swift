import Contract
/// A pipeline topic by the part it plays: the key under `topics` in the worker configuration and in
/// a topic layout file (`Config/topics.json`).
public enum TopicRole: String, CaseIterable, Sendable, Hashable, Comparable {
    /// Provisioning requests from backend services.
    case requests
    /// Results for backend services.
    case results
    /// Redacted audit events.
    case audit
    /// Reconciliation jobs (internal).
    case reconcile
    /// Dead letters.
    case dlq
    /// Replayed dead letters that failed again.
    case dlqParked = "dlq_parked"
    /// Write-ahead markers, co-partitioned with `requests`.
    case markers

    /// The topic that plays this role under `names` (the worker configuration's `topics`).
    public func name(in names: TopicNames) -> String {
        switch self {
        case .requests: names.requests
        case .results: names.results
        case .audit: names.audit
        case .reconcile: names.reconcile
        case .dlq: names.deadLetters
        case .dlqParked: names.parked
        case .markers: names.markers
        }
    }

    /// Orders roles as `allCases` lists them (the pipeline's order).
    public static func < (lhs: TopicRole, rhs: TopicRole) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}
