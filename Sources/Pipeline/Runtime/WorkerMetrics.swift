import Contract
import Observability

/// The worker's metrics (Prometheus names under `provisioner_`). Labels are bounded words only:
/// program, issuer, wallet, status, code, stage, reason — never an identifier.
struct WorkerMetrics: Sendable {
    let registry: MetricsRegistry
    let issuerLatency: Histogram
    let endToEnd: Histogram
    let overhead: Histogram
    let deadlineMisses: Counter
    let pausedPartitions: Gauge
    let publishRetries: Counter
    let auditFailures: Counter
    let undecodableMarkers: Counter

    init(registry: MetricsRegistry) {
        self.registry = registry
        issuerLatency = registry.histogram("provisioner_issuer_latency_ms", help: "Time spent in issuer HTTP calls per request, ms.")
        endToEnd = registry.histogram("provisioner_end_to_end_latency_ms", help: "From the request's window start to its result being acknowledged, ms.")
        overhead = registry.histogram("provisioner_overhead_ms", help: "Received-to-published time minus issuer time, ms.")
        deadlineMisses = registry.counter("provisioner_deadline_misses_total", help: "Results acknowledged after deadline minus reply margin.")
        pausedPartitions = registry.gauge("provisioner_paused_partitions", help: "Request partitions paused for backpressure or marker catch-up.")
        publishRetries = registry.counter("provisioner_publish_retries_total", help: "Re-sends of results, markers, jobs and dead letters after a failed delivery.")
        auditFailures = registry.counter("provisioner_audit_publish_failures_total", help: "Audit events dropped after every retry failed.")
        undecodableMarkers = registry.counter("provisioner_undecodable_markers_total",
                                              help: "Call markers read back whose value could not be read (their request is treated as possibly called).")
    }

    /// Counts a result by program, wallet and status.
    func countResult(_ result: ProvisioningResult) {
        registry.counter("provisioner_requests_total", help: "Results published, by program, wallet and status.",
                         labels: ["program": result.program ?? "unknown", "wallet": result.wallet?.rawValue ?? "unknown",
                                  "status": result.status.rawValue]).increment()
        if result.status == .expired {
            registry.counter("provisioner_expired_total", help: "Requests answered expired without an issuer call.",
                             labels: ["program": result.program ?? "unknown"]).increment()
        }
    }

    /// Counts a dead letter by code.
    func countDeadLetter(code: String, parked: Bool) {
        registry.counter("provisioner_dead_letters_total", help: "Messages dead-lettered, by code (parked: replays that failed again).",
                         labels: ["code": code, "parked": parked ? "true" : "false"]).increment()
    }

    /// Counts a refusal without an issuer call.
    func countRefusal(reason: String, program: String) {
        registry.counter("provisioner_refusals_total", help: "Requests refused without an issuer call, by reason.",
                         labels: ["reason": reason, "program": program]).increment()
    }

    /// Counts a duplicate delivery.
    func countDuplicate() {
        registry.counter("provisioner_duplicates_ignored_total", help: "Duplicate deliveries not sent to the issuer again.").increment()
    }

    /// Counts a reconciliation outcome.
    func countReconcile(_ outcome: String) {
        registry.counter("provisioner_reconcile_total", help: "Reconciliation attempts by outcome.", labels: ["outcome": outcome]).increment()
    }

    /// Counts a breaker transition.
    func countBreakerTransition(endpoint: String, to state: String) {
        registry.counter("provisioner_breaker_transitions_total", help: "Circuit breaker state changes.",
                         labels: ["endpoint": endpoint, "state": state]).increment()
    }
}
