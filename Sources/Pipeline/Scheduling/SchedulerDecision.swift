/// What the scheduler tells its driver to do with a ticket.
public enum SchedulerDecision<Payload: Sendable>: Sendable {
    /// Start the issuer call now; `isProbe` when it is a half-open breaker probe.
    case start(SchedulerTicket<Payload>, isProbe: Bool)
    /// The ticket can no longer make its deadline: answer `expired` without calling.
    case expire(SchedulerTicket<Payload>)
    /// The ticket is refused without a call (breaker open, or no rate-limit token in time).
    case refuse(SchedulerTicket<Payload>, SchedulerRefusal)
}

/// Why a ticket was refused without an issuer call.
public enum SchedulerRefusal: String, Sendable, CaseIterable {
    /// The endpoint's circuit breaker is open: `failed`, `issuer_unavailable`.
    case breakerOpen = "breaker_open"
    /// The program's rate limit has no token before the deadline: `failed`, `rate_limited`.
    case rateLimited = "rate_limited"
    /// The program holds its `max_unsettled` requests already (`UnsettledQuota`, before the
    /// scheduler): `failed`, `rate_limited`.
    case maxUnsettled = "max_unsettled"
}
