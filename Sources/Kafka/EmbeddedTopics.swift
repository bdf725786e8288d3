/// The pipeline's default topic names, as the embedded broker creates them.
public enum EmbeddedTopics {
    /// Requests from backend services (key: card id).
    public static let requests = "provisioning.requests"
    /// Results for backend services (key: request id).
    public static let results = "provisioning.results"
    /// One audit event per stage (key: request id).
    public static let audit = "provisioning.audit"
    /// Reconciliation jobs (internal).
    public static let reconcile = "provisioning.reconcile"
    /// Dead letters.
    public static let deadLetters = "provisioning.dlq"
    /// Replayed dead letters that failed again.
    public static let parkedDeadLetters = "provisioning.dlq.parked"
    /// Write-ahead markers of issuer calls (same partition count as `requests`).
    public static let markers = "provisioning.markers"

    /// Every pipeline topic, in the order the embedded broker creates them.
    public static let pipeline: [String] = [
        requests, results, audit, reconcile, deadLetters, parkedDeadLetters, markers,
    ]
}
