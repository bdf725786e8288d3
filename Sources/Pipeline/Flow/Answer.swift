import Contract
import Recovery

/// One answer to a request record and how it was reached: what `RequestFlow.deliver` decides,
/// publishes and settles. Everything the exit depends on (whether the record claimed the request
/// id, whether it counts as an answer after a `started` marker, whether the issuer may have seen the request)
/// follows from `route`, so no caller passes it as a flag.
struct Answer: Sendable {
    /// How the answer was reached.
    enum Route: Sendable, Equatable {
        /// Before admission: a malformed message or an early rejection. Nothing was claimed.
        case early
        /// An admitted request answered without calling its issuer (invalid, expired, refused).
        case withoutCall
        /// After this attempt's own `started` marker and issuer call; `mayHaveReachedIssuer`:
        /// the request may have been sent (false when the budget ran out before sending).
        case afterCall(mayHaveReachedIssuer: Bool)
        /// From a previous owner's `started` marker: `indeterminate`, with a reconciliation job.
        case recovered
        /// An earlier attempt's decision, read back from the markers and published again.
        case republished
    }

    /// The result to publish.
    var result: ProvisioningResult
    /// The record it answers, and its value (dead-lettered if the result cannot be published).
    let origin: RecordOrigin
    let value: [UInt8]
    /// The admitted job (nil for an early answer).
    let job: ProvisioningJob?
    let route: Route
    /// The reconciliation job published with an interim answer.
    var reconcile: ReconcileJob?

    init(_ result: ProvisioningResult, origin: RecordOrigin, value: [UInt8], job: ProvisioningJob?, route: Route,
         reconcile: ReconcileJob? = nil) {
        // Only an answer before admission has no job, and it claimed nothing.
        precondition((route == .early) == (job == nil), "an early answer has no job; every other has one")
        self.result = result
        self.origin = origin
        self.value = value
        self.job = job
        self.route = route
        self.reconcile = reconcile
    }

    /// An admitted job's answer.
    init(_ result: ProvisioningResult, job: ProvisioningJob, route: Route, reconcile: ReconcileJob? = nil) {
        self.init(result, origin: job.origin, value: job.value, job: job, route: route, reconcile: reconcile)
    }

    /// Whether this record claimed the request id (`Route.claimed`).
    var claimed: Bool { route.claimed }
    /// Whether the answer counts as one after a `started` marker (`Route.afterStartedMarker`).
    var afterStartedMarker: Bool { route.afterStartedMarker }
    /// Whether the issuer may have received the request (`Route.issuerMayHaveBeenCalled`).
    var issuerMayHaveBeenCalled: Bool { route.issuerMayHaveBeenCalled }
    /// The record's exit once its result is acknowledged (`Route.exit`).
    func exit(decided: Bool) -> RecordExit { route.exit(decided: decided) }
}

extension Answer.Route {
    /// Whether the record claimed the request id in the duplicate filter (every admitted one).
    var claimed: Bool { self != .early }

    /// Whether the answer counts as one after a `started` marker, decided and settled as a
    /// caller's (this attempt's call, a previous owner's marker, or the one the republished
    /// decision followed). An answer without a call counts as none, even when a marker write
    /// reported failed landed after all, or ownership could not be confirmed after it.
    var afterStartedMarker: Bool {
        switch self {
        case .afterCall, .recovered, .republished: true
        case .early, .withoutCall: false
        }
    }

    /// Whether the issuer may have received the request (its dead letter says so, and is not
    /// replayed blindly).
    var issuerMayHaveBeenCalled: Bool {
        switch self {
        case .afterCall(let sent): sent
        case .recovered: true
        case .early, .withoutCall, .republished: false
        }
    }

    /// The record's exit once its result is acknowledged; `decided`: its decision marker was written first.
    func exit(decided: Bool) -> RecordExit {
        decided ? .decided(afterCall: afterStartedMarker) : .answered(recovered: self == .recovered, afterCall: afterStartedMarker)
    }
}
