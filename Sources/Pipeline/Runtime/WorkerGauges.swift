import Observability

/// The worker's computed gauges: figures of the scheduler, the offset ledger, the requests
/// consumer, the reconciler and the producer, read at each scrape.
enum WorkerGauges {
    /// Registers the gauges on `metrics`. Their closures hold the worker's parts weakly: those
    /// parts hold the registry (through their metrics), and a strong capture would keep a stopped
    /// worker alive.
    static func register(on metrics: MetricsRegistry, scheduler: CallScheduler, ledger: OffsetLedger, producer: any RecordProducer,
                         requests: RequestConsumer, reconciler: ReconcileRunner, programs: [String: ProgramConfiguration]) {
        metrics.computedGauge("provisioner_in_flight", help: "Issuer calls in flight.") { [weak scheduler] in
            Double(scheduler?.counts.running ?? 0)
        }
        metrics.computedGauge("provisioner_queued", help: "Requests waiting for an issuer-call slot.") { [weak scheduler] in
            Double(scheduler?.counts.queued ?? 0)
        }
        metrics.computedGauge("provisioner_unsettled", help: "Requests received whose outputs are not yet acknowledged.") { [weak ledger] in
            Double(ledger?.unsettledCount() ?? 0)
        }
        metrics.computedGauge("provisioner_consumer_lag",
                              help: "Requests on the topic not yet received by this worker (summed over its partitions, measured every 5 s).") { [weak requests] in
            Double(requests?.consumerLag ?? 0)
        }
        metrics.computedGauge("provisioner_reconcile_backlog", help: "Reconciliation jobs held or running.") { [weak reconciler] in
            Double(reconciler?.backlog ?? 0)
        }
        // Peaks since the start, recorded where the counts rise (no peak between two scrapes is missed).
        metrics.computedGauge("provisioner_in_flight_high_water", help: "Most issuer calls in flight at once since the worker started.") { [weak scheduler] in
            Double(scheduler?.peaks.running ?? 0)
        }
        metrics.computedGauge("provisioner_queued_high_water", help: "Most requests waiting for an issuer-call slot at once since the worker started.") { [weak scheduler] in
            Double(scheduler?.peaks.queued ?? 0)
        }
        metrics.computedGauge("provisioner_unsettled_high_water",
                              help: "Most requests received and not yet settled at once since the worker started (read after each poll).") { [weak requests] in
            Double(requests?.unsettledPeak ?? 0)
        }
        metrics.computedGauge("provisioner_reconcile_held_high_water",
                              help: "Most reconciliation jobs one reconcile partition held at once since the worker started (at most reconcile.max_held_per_partition).") { [weak reconciler] in
            Double(reconciler?.heldPeak ?? 0)
        }
        metrics.computedGauge("provisioner_producer_outstanding", help: "Messages produced and not yet acknowledged.") { [weak producer] in
            Double(producer?.outstandingCount ?? 0)
        }
        metrics.computedGauge("provisioner_limit_share_ratio",
                              help: "This worker's share of the group-wide program limits: request partitions owned / partitions of the topic.") { [weak scheduler] in
            scheduler?.shareSnapshot().share.fraction ?? 0
        }
        for (name, program) in programs {
            if program.rateLimit != nil {
                metrics.computedGauge("provisioner_limit_share_rate_per_second",
                                      help: "This worker's share of the program's group-wide rate limit, calls per second.", labels: ["program": name]) { [weak scheduler] in
                    scheduler?.shareSnapshot().programs[name]?.perSecond ?? 0
                }
            }
            if program.maxInFlight != nil {
                metrics.computedGauge("provisioner_limit_share_max_in_flight",
                                      help: "This worker's share of the program's group-wide bulkhead, calls in flight.", labels: ["program": name]) { [weak scheduler] in
                    Double(scheduler?.shareSnapshot().programs[name]?.maxInFlight ?? 0)
                }
            }
            metrics.computedGauge("provisioner_bulkhead_in_flight_high_water", help: "Most issuer calls in flight at once per program since the worker started.",
                                  labels: ["program": name]) { [weak scheduler] in
                Double(scheduler?.peaks.runningPerProgram[name] ?? 0)
            }
            metrics.computedGauge("provisioner_bulkhead_in_flight", help: "Issuer calls in flight per program.", labels: ["program": name]) { [weak scheduler] in
                Double(scheduler?.isolationSnapshot().perProgram[name] ?? 0)
            }
            let endpoint = program.endpoint
            let issuer = program.issuer.rawValue
            metrics.computedGauge("provisioner_breaker_state", help: "Circuit breaker per issuer endpoint: 0 closed, 1 half-open, 2 open.",
                                  labels: ["issuer": issuer, "program": name]) { [weak scheduler] in
                switch scheduler?.isolationSnapshot().breakers[endpoint] {
                case .open: 2
                case .halfOpen: 1
                default: 0
                }
            }
            if program.rateLimit != nil {
                metrics.computedGauge("provisioner_rate_limit_tokens", help: "Rate-limit tokens available per program.", labels: ["program": name]) { [weak scheduler] in
                    scheduler?.isolationSnapshot().tokens[name] ?? 0
                }
            }
        }
    }
}
