/// The stage an audit event records (CONTRACT section 5).
public enum AuditStage: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The worker read the request.
    case received
    /// The request was rejected before the issuer call.
    case rejected
    /// The request expired before the issuer call.
    case expired
    /// The issuer call started.
    case issuerCallStarted = "issuer_call_started"
    /// The issuer answered.
    case issuerResponded = "issuer_responded"
    /// The issuer call timed out.
    case issuerTimedOut = "issuer_timed_out"
    /// The result was published.
    case resultPublished = "result_published"
    /// A reconciliation job was scheduled.
    case reconcileScheduled = "reconcile_scheduled"
    /// Reconciliation settled the request.
    case reconciled
    /// The message went to the dead-letter topic.
    case deadLettered = "dead_lettered"
    /// An operator replayed a dead letter.
    case replayed
    /// A duplicate delivery was ignored.
    case duplicateIgnored = "duplicate_ignored"
    /// An issuer endpoint's circuit breaker changed state (an addition to CONTRACT section 5).
    case breakerChanged = "breaker_changed"

    /// The wire name.
    public var description: String { rawValue }
}
