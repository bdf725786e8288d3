/// Limits and policies of the `WorkScheduler`.
public struct SchedulerSettings: Sendable, Equatable {
    /// How queued work is ordered.
    public enum Ordering: String, Sendable {
        /// Earliest deadline first (the default).
        case earliestDeadlineFirst = "edf"
        /// Arrival order, and no shedding: the naive baseline the `deadline` benchmark compares against.
        case arrival = "fifo"
    }

    /// Issuer calls in flight at once, across everything.
    public var globalLimit: Int = 512
    /// Calls in flight per program, unless `programLimits` names it.
    public var defaultProgramLimit: Int = .max
    /// Calls in flight per named program.
    public var programLimits: [String: Int] = [:]
    /// Calls in flight per issuer endpoint, unless `endpointLimits` names it.
    public var defaultEndpointLimit: Int = .max
    /// Calls in flight per named endpoint.
    public var endpointLimits: [String: Int] = [:]
    /// Rate limits toward the issuer, per program (absent: unlimited).
    public var rateLimits: [String: RateLimit] = [:]
    /// Breaker settings per endpoint (absent: `defaultBreaker`).
    public var breakers: [String: CircuitBreaker.Settings] = [:]
    /// Breaker settings for endpoints not named in `breakers`; nil disables breakers.
    public var defaultBreaker: CircuitBreaker.Settings? = .init()
    /// `scheduler.limits_scope: "worker"`: program rate limits and bulkheads apply to each worker
    /// as configured; false (the default, `"group"`): they are the group's, shared by assignment
    /// (`LimitShare`).
    public var limitsPerWorker = false
    /// Queue ordering.
    public var ordering: Ordering = .earliestDeadlineFirst

    /// A token bucket's settings.
    public struct RateLimit: Sendable, Equatable {
        /// Calls per second.
        public var perSecond: Double
        /// Calls allowed at once above the rate.
        public var burst: Double
        /// Creates a rate limit.
        public init(perSecond: Double, burst: Double) {
            self.perSecond = perSecond
            self.burst = burst
        }
    }

    /// Creates the default settings.
    public init() {}

    func limit(program: String) -> Int { programLimits[program] ?? defaultProgramLimit }
    func limit(endpoint: String) -> Int { endpointLimits[endpoint] ?? defaultEndpointLimit }
}
