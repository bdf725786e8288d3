import Contract
import Kafka
import Observability
import Recovery

/// The worker's metrics (Prometheus names under `provisioner_`). Labels are bounded words only:
/// program, issuer, wallet, status, code, stage, reason — never an identifier.
///
/// Series are never freed, so every label value comes from configuration or from an enum of the
/// code, never from a message: a program name not configured on this worker (an unknown program,
/// or a rejected request naming anything) is counted as `unknown`, a dead-letter code the code does
/// not define as `other`.
///
/// Every labelled counter whose label values are all known at start (configured programs and
/// endpoints, the code's enums) is created at 0 for each combination when the metrics are built
/// (`primeKnownSeries`), so a fresh worker exports 0, not nothing: dashboards show 0 instead of
/// "No data", and `increase()` counts an event from the first one. The fallbacks `unknown` and
/// `other` appear only once something falls outside the known sets.
struct WorkerMetrics: Sendable {
    /// The label value of anything outside the bounded set.
    static let unknownLabel = "unknown"
    /// The label value of a dead-letter code the code does not define.
    static let otherLabel = "other"

    let registry: MetricsRegistry
    let issuerLatency: LatencyHistogram
    let endToEnd: LatencyHistogram
    let overhead: LatencyHistogram
    let deadlineMisses: Counter
    let pausedPartitions: Gauge
    let publishRetries: Counter
    let auditFailures: Counter
    let fetchStalls: Counter
    /// Forced (synchronous) commits, on a revoke or at a stop, the group coordinator did not answer within their bound.
    let commitTimeouts: Counter
    /// Records refused by the partition lifecycle's gate (received before their assignment's catch-up finished).
    let recordsBeforeCatchUp: Counter
    /// Rewinds repeated because a record past the offset rewound to arrived first (both loops).
    let rewindsRepeated: Counter
    /// Times every requests partition was paused because `max_pending` records were unsettled.
    let backpressurePauses: Counter
    /// The markers log's counters: fencing, decisions, stale assignments.
    let markers: MarkerMetrics
    /// Program names configured on this worker: the only values of the `program` label.
    private let programs: Set<String>
    /// Issuer endpoints of the configured programs: the only values of the `endpoint` label.
    private let endpoints: Set<String>
    /// librdkafka's statistics reports of the worker's clients.
    var kafkaStatistics: KafkaStatisticsMetrics { KafkaStatisticsMetrics(registry: registry) }

    init(registry: MetricsRegistry, programs: [ProgramConfiguration]) {
        self.registry = registry
        self.programs = Set(programs.map(\.name))
        self.endpoints = Set(programs.map(\.endpoint))
        issuerLatency = LatencyHistogram(
            registry, "provisioner_issuer_latency_seconds", help: "Time spent in issuer HTTP calls per request, seconds.",
            deprecated: "provisioner_issuer_latency_ms")
        endToEnd = LatencyHistogram(
            registry, "provisioner_end_to_end_latency_seconds", help: "From the request's window start to its result being acknowledged, seconds.",
            deprecated: "provisioner_end_to_end_latency_ms")
        overhead = LatencyHistogram(
            registry, "provisioner_overhead_seconds", help: "Received-to-published time minus issuer time, seconds.",
            deprecated: "provisioner_overhead_ms")
        deadlineMisses = registry.counter("provisioner_deadline_misses_total", help: "Results acknowledged after deadline minus reply margin.")
        pausedPartitions = registry.gauge("provisioner_paused_partitions", help: "Request partitions paused for backpressure or marker catch-up.")
        publishRetries = registry.counter("provisioner_publish_retries_total", help: "Re-sends of results, markers, jobs and dead letters after a failed delivery.")
        auditFailures = registry.counter("provisioner_audit_publish_failures_total", help: "Audit events dropped after every retry failed.")
        fetchStalls = registry.counter("provisioner_fetch_stalls_total",
                                       help: "Requests partitions found not delivering records although owned, unpaused and with records waiting, then restarted (resume and seek).")
        commitTimeouts = registry.counter("provisioner_commit_timeouts_total",
                                          help: "Synchronous offset commits (on a revoke or at a stop) the group coordinator did not answer within their bound; what they carried is redelivered to the partition's next owner.")
        recordsBeforeCatchUp = registry.counter("provisioner_records_before_catch_up_total",
                                                help: "Request records received before their partition's marker catch-up finished: not handled, the partition rewound to them.")
        rewindsRepeated = registry.counter("provisioner_rewinds_repeated_total",
                                           help: "Requests or reconciliation partitions rewound again because a record past the offset they were rewound to arrived first (the seek did not take effect).")
        backpressurePauses = registry.counter("provisioner_backpressure_pauses_total",
                                              help: "Times every requests partition was paused because max_pending records were unsettled (resumed at half).")
        markers = MarkerMetrics(registry: registry)
        registry.gauge(Self.librdkafkaInfo, help: "Always 1; the version label is the librdkafka the worker loaded at run time (rd_kafka_version_str).",
                       labels: ["version": KafkaRuntime.version]).set(1)
        primeKnownSeries(programs: programs)
    }

    /// The name of the librdkafka info gauge (`version` label: the loaded library's version).
    static let librdkafkaInfo = "provisioner_librdkafka_info"

    /// Reconciliation outcomes: the only values of the `outcome` label (the words ReconcileRunner
    /// passes to `countReconcile`; any other word is counted as `unknown`).
    static let reconcileOutcomes = ["applied", "already_present", "not_applied", "not_applied_yet", "no_state_api", "not_attributable", "payment", "previous_owner_answered", "previous_owner_decided",
                                    unknownLabel]

    /// Creates every series of the labelled counters whose labels are known now, at 0: results by
    /// configured program × wallet × status, expired and refusals by configured program, dead
    /// letters by defined code, reconciliation outcomes, breaker transitions by configured endpoint
    /// and state, fencing verdicts, unauthenticated messages, duplicates.
    private func primeKnownSeries(programs: [ProgramConfiguration]) {
        let names = Set(programs.map(\.name)).sorted()
        for program in names {
            for wallet in Wallet.allCases {
                for status in ResultStatus.allCases {
                    _ = requestsCounter(program: program, wallet: wallet.rawValue, status: status.rawValue)
                }
            }
            _ = expiredCounter(program: program)
            for reason in SchedulerRefusal.allCases { _ = refusalsCounter(reason: reason.rawValue, program: program) }
        }
        for code in DeadLetterCode.defined {
            for parked in [false, true] { _ = deadLettersCounter(code: code.rawValue, parked: parked) }
        }
        for outcome in Self.reconcileOutcomes { _ = reconcileCounter(outcome) }
        for endpoint in Set(programs.map(\.endpoint)).sorted() {
            for state in CircuitBreaker.State.allCases { _ = breakerTransitionsCounter(endpoint: endpoint, state: state.rawValue) }
        }
        for replay in [false, true] { _ = unauthenticatedCounter(replay: replay) }
        for refusal in KafkaError.Refusal.allCases { _ = deadLettersGivenUpCounter(refusal.rawValue) }
        _ = duplicatesCounter()
    }

    /// Creates the per-partition pause gauge at 0 for partitions 0..<`count` of `topic` (the
    /// requests topic once its partition count is read, before the loops start), so the family is
    /// there before the first assignment; an assignment sets the partitions it pauses to 1.
    func primePartitionsPaused(topic: String, count: Int) {
        for partition in 0..<max(0, count) { setPartitionPaused(TopicPartition(topic: topic, partition: Int32(partition)), false) }
    }

    /// The `program` label of `name`: the name when it is configured here, else `unknown`.
    func programLabel(_ name: String?) -> String {
        guard let name, programs.contains(name) else { return Self.unknownLabel }
        return name
    }

    /// Counts a result by program, wallet and status.
    func countResult(_ result: ProvisioningResult) {
        let program = programLabel(result.program)
        requestsCounter(program: program, wallet: result.wallet?.rawValue ?? Self.unknownLabel, status: result.status.rawValue).increment()
        if result.status == .expired { expiredCounter(program: program).increment() }
    }

    private func requestsCounter(program: String, wallet: String, status: String) -> Counter {
        registry.counter("provisioner_requests_total", help: "Results published, by program, wallet and status.",
                         labels: ["program": program, "wallet": wallet, "status": status])
    }

    private func expiredCounter(program: String) -> Counter {
        registry.counter("provisioner_expired_total", help: "Requests answered expired without an issuer call.", labels: ["program": program])
    }

    /// Counts a dead letter by code.
    func countDeadLetter(code: String, parked: Bool) {
        deadLettersCounter(code: DeadLetterCode.defined.contains(DeadLetterCode(rawValue: code)) ? code : Self.otherLabel, parked: parked).increment()
    }

    private func deadLettersCounter(code: String, parked: Bool) -> Counter {
        registry.counter("provisioner_dead_letters_total", help: "Messages dead-lettered, by code (parked: replays that failed again).",
                         labels: ["code": code, "parked": parked ? "true" : "false"])
    }

    /// Counts a dead letter given up because the cluster refuses it for good, by why.
    func countDeadLetterGivenUp(refusal: KafkaError.Refusal) {
        deadLettersGivenUpCounter(refusal.rawValue).increment()
    }

    private func deadLettersGivenUpCounter(_ refusal: String) -> Counter {
        registry.counter("provisioner_dead_letters_given_up_total",
                         help: "Dead letters the cluster refused for good (too large, not authorized, invalid), given up so the offset completes; each is logged as an error.",
                         labels: ["refusal": refusal])
    }

    /// Counts a refusal without an issuer call.
    func countRefusal(reason: String, program: String) {
        refusalsCounter(reason: SchedulerRefusal(rawValue: reason)?.rawValue ?? Self.unknownLabel, program: programLabel(program)).increment()
    }

    private func refusalsCounter(reason: String, program: String) -> Counter {
        registry.counter("provisioner_refusals_total", help: "Requests refused without an issuer call, by reason.",
                         labels: ["reason": reason, "program": program])
    }

    /// The per-partition pause gauge: 1 while `partition` (of the requests or the reconcile topic,
    /// both from configuration) is paused, 0 once resumed or revoked. Partition numbers are bounded
    /// by the topic's partition count, so the series stay bounded; a revoked one stays at 0.
    func setPartitionPaused(_ partition: TopicPartition, _ paused: Bool) {
        registry.gauge(Self.partitionPaused, help: "1 while this worker has the partition paused (backpressure, marker catch-up, reconcile hold limit), 0 otherwise.",
                       labels: ["topic": partition.topic, "partition": String(partition.partition)]).set(paused ? 1 : 0)
    }

    /// The name of the per-partition pause gauge (the console's Lag page reads it).
    static let partitionPaused = "provisioner_partition_paused"

    /// Counts a duplicate delivery.
    func countDuplicate() {
        duplicatesCounter().increment()
    }

    private func duplicatesCounter() -> Counter {
        registry.counter("provisioner_duplicates_ignored_total", help: "Duplicate deliveries not sent to the issuer again.")
    }

    /// Counts a reconciliation outcome (a word of the runner's, never read from a record; one not
    /// in `reconcileOutcomes` as `unknown`).
    func countReconcile(_ outcome: String) {
        reconcileCounter(Self.reconcileOutcomes.contains(outcome) ? outcome : Self.unknownLabel).increment()
    }

    private func reconcileCounter(_ outcome: String) -> Counter {
        registry.counter("provisioner_reconcile_total", help: "Reconciliation attempts by outcome.", labels: ["outcome": outcome])
    }

    /// Counts a breaker transition.
    func countBreakerTransition(endpoint: String, to state: String) {
        breakerTransitionsCounter(endpoint: endpoints.contains(endpoint) ? endpoint : Self.unknownLabel,
                                  state: CircuitBreaker.State(rawValue: state)?.rawValue ?? Self.unknownLabel).increment()
    }

    private func breakerTransitionsCounter(endpoint: String, state: String) -> Counter {
        registry.counter("provisioner_breaker_transitions_total", help: "Circuit breaker state changes.",
                         labels: ["endpoint": endpoint, "state": state])
    }

    /// Exports the evictions of the nonce guard and the duplicate filter caused by their size
    /// bounds (not horizon expiry): a flood that pushes remembered entries out early shows here.
    func exportEvictions(nonceGuard: NonceGuard, duplicates: DuplicateFilter) {
        registry.computedCounter("provisioner_nonce_guard_evictions_total",
                                 help: "Apple nonces forgotten before their horizon because the guard was full (nonce_guard: a flood, or a horizon too long).") {
            Double(nonceGuard.evictedBeforeHorizon)
        }
        registry.computedCounter("provisioner_duplicate_filter_evictions_total",
                                 help: "Finished request ids forgotten before the duplicate horizon because the filter was full.") {
            Double(duplicates.evictedBeforeHorizon)
        }
    }

    /// Exports the durable duplicate horizon: ids held, bytes allocated, and ids pushed out of each
    /// configured program's share of the budget before their horizon ended, and out of the share of
    /// every other program.
    func exportHorizon(_ horizon: DuplicateHorizon) {
        registry.computedGauge("provisioner_duplicate_index_entries",
                               help: "Request ids answered within the duplicate horizon, held for the partitions this worker owns or released.") {
            Double(horizon.count)
        }
        registry.computedGauge("provisioner_duplicate_index_bytes",
                               help: "Bytes allocated by the duplicate horizon's indexes.") {
            Double(horizon.allocatedBytes)
        }
        // Configured programs only (a bounded label set); the share of programs not configured
        // and of earlier versions' markers has a series of its own.
        for share in horizon.maxEntries.keys.sorted() where share != DuplicateHorizon.otherShare {
            registry.computedCounter("provisioner_duplicate_index_evictions_total",
                                     help: "Answered request ids forgotten before the duplicate horizon because their program's share of duplicates.max_bytes was full.",
                                     labels: ["program": share]) {
                Double(horizon.evictedBeforeHorizon[share] ?? 0)
            }
        }
        registry.computedCounter("provisioner_duplicate_index_unconfigured_evictions_total",
                                 help: "Answered request ids of programs not configured here (or of earlier versions' markers) forgotten before the duplicate horizon because their share of duplicates.max_bytes was full.") {
            Double(horizon.evictedBeforeHorizon[DuplicateHorizon.otherShare] ?? 0)
        }
    }

    /// Counts a message that failed its signature check and got no answer (`replay`: it claimed
    /// to be an operator's replay).
    func countUnauthenticated(replay: Bool) {
        unauthenticatedCounter(replay: replay).increment()
    }

    private func unauthenticatedCounter(replay: Bool) -> Counter {
        registry.counter("provisioner_unauthenticated_total", help: "Messages that failed the signature check: audited and dead-lettered, never answered.",
                         labels: ["replay": replay ? "true" : "false"])
    }
}
