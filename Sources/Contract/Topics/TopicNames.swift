/// The pipeline's topic names (CONTRACT section 2), configurable under `topics`.
public struct TopicNames: Sendable, Hashable {
    /// Provisioning requests from backend services.
    public var requests = "provisioning.requests"
    /// Results for backend services.
    public var results = "provisioning.results"
    /// Redacted audit events.
    public var audit = "provisioning.audit"
    /// Reconciliation jobs (internal).
    public var reconcile = "provisioning.reconcile"
    /// Dead letters.
    public var deadLetters = "provisioning.dlq"
    /// Replayed dead letters that failed again.
    public var parked = "provisioning.dlq.parked"
    /// Write-ahead markers of issuer calls, co-partitioned with `requests` (internal).
    public var markers = "provisioning.markers"

    /// The default names.
    public init() {}

    /// Every topic the pipeline uses.
    public var all: [String] { [requests, results, audit, reconcile, deadLetters, parked, markers] }
}
