import Observability

/// How often each path worth testing ran in a batch of schedules: read from what the workers
/// counted (their `/metrics` series, summed over every process of a run, killed ones included)
/// and from the faults the schedule carried out. A batch that finds nothing must show these paths
/// ran; `provisioner simulate` fails when one of `required` never did.
public struct SimulationCoverage: Sendable, Equatable {
    /// A path and how it is recognised.
    public struct Path: Sendable, Hashable {
        /// Its name in the report.
        public let name: String
        /// The workers' series that count it (summed), e.g. `provisioner_reconcile_total{outcome="applied"}`;
        /// or, for a path the schedule itself counts, a name starting with `schedule:`.
        let series: [String]
    }

    /// The paths every CI batch must run.
    public static let required: [Path] = [
        Path(name: "hand-over: a new owner recovers a call its predecessor started", series: ["schedule:recovered"]),
        Path(name: "previous owner's decision found by the reconciler", series: [#"provisioner_reconcile_total{outcome="previous_owner_decided"}"#]),
        Path(name: "fenced out: a zombie's call stopped by a newer owner's fence", series: [#"provisioner_call_fencing_total{verdict="fenced_out"}"#]),
        Path(name: "withdrawn decision: a zombie's answer never published", series: [#"provisioner_decisions_total{verdict="withdrawn"}"#]),
        Path(name: "unconfirmed: no call for want of a fencing read", series: [#"provisioner_call_fencing_total{verdict="unconfirmed"}"#]),
        Path(name: "earlier decision published instead of one's own", series: [#"provisioner_decisions_total{verdict="earlier"}"#]),
        Path(name: "stale assignment: a newer owner's fence found at catch-up", series: ["provisioner_stale_assignments_total"]),
        Path(name: "late fence: another process's fence after this owner's, older, fences nobody out", series: ["provisioner_late_fences_total"]),
        Path(name: "rewound again: a seek that did not take effect", series: ["provisioner_rewinds_repeated_total"]),
        Path(name: "fetch watchdog restarted a partition", series: ["provisioner_fetch_stalls_total"]),
        Path(name: "backpressure: every partition paused at max_pending", series: ["provisioner_backpressure_pauses_total"]),
        Path(name: "reconciled: applied", series: [#"provisioner_reconcile_total{outcome="applied"}"#]),
        Path(name: "reconciled: already in the wallet (another call's token)", series: [#"provisioner_reconcile_total{outcome="already_present"}"#]),
        Path(name: "reconciled: not applied", series: [#"provisioner_reconcile_total{outcome="not_applied"}"#]),
        Path(name: "reconciled: too early to trust 'not applied' (apply horizon)", series: [#"provisioner_reconcile_total{outcome="not_applied_yet"}"#]),
        Path(name: "reconciled: a Legacy Google Pay token no state attributes (check_wallet)", series: [#"provisioner_reconcile_total{outcome="not_attributable"}"#]),
        Path(name: "reconciled: no state query (check_wallet)", series: [#"provisioner_reconcile_total{outcome="no_state_api"}"#]),
        Path(name: "duplicate ignored", series: ["provisioner_duplicates_ignored_total"]),
        Path(name: "expired without a call", series: ["provisioner_expired_total"]),
        Path(name: "publish retried after a produce fault", series: ["provisioner_publish_retries_total"]),
        Path(name: "workload: Google Wallet applied by Imprint", series: ["schedule:applied/imprint/google_wallet"]),
        Path(name: "workload: Google Wallet applied by DCS", series: ["schedule:applied/dcs/google_wallet"]),
        Path(name: "workload: Apple Pay applied by Imprint", series: ["schedule:applied/imprint/apple_pay"]),
        Path(name: "workload: Apple Pay applied by Gnosis Pay", series: ["schedule:applied/gnosis/apple_pay"]),
        Path(name: "workload: Apple Pay applied by DCS", series: ["schedule:applied/dcs/apple_pay"]),
        Path(name: "workload: Legacy Google Pay applied by Imprint", series: ["schedule:applied/imprint/google_pay"]),
        Path(name: "workload: a Worldpay payment authorized", series: ["schedule:applied/worldpay/payment"]),
        Path(name: "workload: a Worldpay payment refused", series: ["schedule:applied/worldpay/refused"]),
        Path(name: "workload: a payment settled through its link (fully or partly)",
             series: ["schedule:applied/worldpay/settle", "schedule:applied/worldpay/partial_settle"]),
        Path(name: "workload: a payment cancelled through its link", series: ["schedule:applied/worldpay/cancel"]),
        Path(name: "reconciled: a payment's events read back", series: [#"provisioner_reconcile_total{outcome="payment"}"#]),
        Path(name: "workload: a signed request's copy on another partition refused", series: ["provisioner_unauthenticated_total"]),
        Path(name: "workload: a final on a reply route", series: ["schedule:routed"]),
        Path(name: "workload: a reply route to a missing topic refused", series: ["schedule:route_refused"]),
        Path(name: "schedule: kill -9", series: ["schedule:kill"]),
        Path(name: "schedule: member evicted while it works (zombie)", series: ["schedule:eviction"]),
        Path(name: "schedule: issuer applies after the client's timeout", series: ["schedule:applied-late"]),
        Path(name: "schedule: markers partition unreadable", series: ["schedule:unreadable"]),
        Path(name: "schedule: an evicted worker cut off from the markers", series: ["schedule:cut_off"]),
        Path(name: "schedule: worker leaves (SIGTERM)", series: ["schedule:leave"]),
        Path(name: "schedule: produce outage of results or markers", series: ["schedule:outage"]),
        Path(name: "schedule: a worker's clock off by more than the publish reserve", series: ["schedule:skew"]),
        Path(name: "schedule: logs that start past offset 0 (retention deleted their beginning)", series: ["schedule:retention"]),
        Path(name: "schedule: consumer group renamed (every worker stops, new ones start in another group)", series: ["schedule:rename"]),
        Path(name: "schedule: a broker slow through a rename (the old group's last fences land late)", series: ["schedule:rename_slow"]),
        Path(name: "schedule: an operator replays a dead letter", series: ["schedule:replay"]),
        Path(name: "synchronous commit given up unanswered", series: ["provisioner_commit_timeouts_total"]),
        Path(name: "dead-lettered after a call", series: [#"provisioner_dead_letters_total{code="publish_failed"}"#]),
        Path(name: "reconciliation exhausted (check_wallet final, then its dead letter)",
             series: [#"provisioner_dead_letters_total{code="reconcile_exhausted"}"#]),
        Path(name: "schedule: the issuers' state queries unavailable for seconds", series: ["schedule:query_outage"]),
    ]

    /// Count per path name.
    public private(set) var counts: [String: Int] = [:]

    /// Nothing counted.
    public init() {}

    /// The paths of one run: `registries` the workers' metrics (every process of the run), summed;
    /// `schedule` what the schedule itself did.
    init(registries: [MetricsRegistry], schedule: [String: Int]) {
        for path in Self.required {
            counts[path.name] = path.series.reduce(0) { sum, name in
                if name.hasPrefix("schedule:") { return sum + schedule[String(name.dropFirst(9)), default: 0] }
                let (metric, labels) = Self.parse(name)
                return sum + Int(registries.reduce(0) { $0 + $1.total(metric, matching: labels) })
            }
        }
    }

    /// A series as the paths name it, `name{a="x",b="y"}` (or `name` for every series of the
    /// metric), as the metric's name and the labels a counted series must have.
    static func parse(_ series: String) -> (name: String, labels: [String: String]) {
        guard let open = series.firstIndex(of: "{"), series.hasSuffix("}") else { return (series, [:]) }
        var labels: [String: String] = [:]
        for pair in series[series.index(after: open)..<series.index(before: series.endIndex)].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
        }
        return (String(series[..<open]), labels)
    }

    /// Adds another run's or batch's counts.
    mutating func add(_ other: SimulationCoverage) {
        counts.merge(other.counts, uniquingKeysWith: +)
    }

    /// The required paths that never ran.
    public var missing: [String] { Self.required.map(\.name).filter { counts[$0, default: 0] == 0 } }

    /// One line per path: its count and name.
    public var table: [String] { Self.required.map { String(format: "%8d  %@", counts[$0.name, default: 0], $0.name) } }
}
