import Observability

/// The counters of the markers log (Prometheus names under `provisioner_`): calls stopped by
/// fencing, final decisions, stale assignments, late fences, undecodable markers. Every labelled
/// series is created at 0 when built.
struct MarkerMetrics: Sendable {
    /// Assignments found stale at catch-up (a newer owner's fence precedes this one's).
    let staleAssignments: Counter
    /// Other processes' fences read after this owner's own that fence it out of nothing (they landed late).
    let lateFences: Counter
    /// Markers read back whose value could not be read.
    let undecodableMarkers: Counter
    private let registry: MetricsRegistry

    init(registry: MetricsRegistry) {
        self.registry = registry
        staleAssignments = registry.counter("provisioner_stale_assignments_total",
                                            help: "Requests partition assignments not run because another process's newer fence (a newer group generation, or another group's written later) preceded this one's: this one's fence landed late.")
        lateFences = registry.counter("provisioner_late_fences_total",
                                      help: "Fences of other processes that this owner's fencing reads found after its own fence and that fence it out of nothing: of an older group generation, or of another group written more than 1 s before this owner's (they landed late, after their writers gave the partition up).")
        undecodableMarkers = registry.counter("provisioner_undecodable_markers_total",
                                              help: "Call markers read back whose value could not be read (their request is treated as possibly called).")
        for confirmation in MarkerFencing.Confirmation.allCases where confirmation != .call { _ = fencingCounter(confirmation) }
        for verdict in FinalDecider.Verdict.labels { _ = decisionsCounter(verdict) }
    }

    /// Counts a fencing verdict that stopped a call whose `started` marker was acknowledged (the
    /// common `call` verdict is not counted: it is the issuer call itself).
    func countFencing(_ confirmation: MarkerFencing.Confirmation) {
        fencingCounter(confirmation).increment()
    }

    private func fencingCounter(_ confirmation: MarkerFencing.Confirmation) -> Counter {
        registry.counter("provisioner_call_fencing_total",
                         help: "Calls stopped after their started marker: fenced_out (another process's fence precedes it: a newer owner holds the partition), unconfirmed (the markers could not be read in time: answered expired, not called).",
                         labels: ["verdict": confirmation.label])
    }

    /// Counts a final decision (`FinalDecider`): `own` (the first), `earlier` (another decision
    /// came first and was published instead), `undecided` (not written), `unreadable` (not checked).
    func countDecision(_ verdict: FinalDecider.Verdict) {
        decisionsCounter(verdict.label).increment()
    }

    private func decisionsCounter(_ label: String) -> Counter {
        registry.counter("provisioner_decisions_total",
                         help: "Final results decided through the markers log: own (first), earlier (another decision came first and was published instead), undecided (the decision could not be written), unreadable (the log could not be read to check it).",
                         labels: ["verdict": label])
    }
}
