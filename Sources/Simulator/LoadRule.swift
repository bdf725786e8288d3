/// Latency and fault injection for cards without a magic suffix, for one issuer prefix or for all.
///
/// JSON:
/// ```json
/// { "latency": {"distribution": "lognormal", "median_ms": 40, "sigma": 0.6, "max_ms": 5000},
///   "tail": {"probability": 0.01, "latency_ms": 2500},
///   "error_rates": {"503": 0.01, "504": 0.002, "429": 0.005},
///   "retry_after_seconds": 1,
///   "hang_rate": 0.0005 }
/// ```
/// Every key is optional (no delay, no faults). Rates are probabilities per call; their sum with
/// `hang_rate` is at most 1. A drawn 503, 504 or 429 changes no state (nothing is applied) and is
/// delayed like any answer; a drawn hang answers 504 only after the profile's `hang_ms`.
public struct LoadRule: Sendable, Hashable {
    /// The delay before answering.
    public var latency: LatencyDistribution
    /// An optional slow tail.
    public var tail: LatencyTail?
    /// Share of calls answered 503 (service unavailable).
    public var unavailableRate: Double
    /// Share of calls answered 504 (gateway timeout, nothing applied).
    public var gatewayTimeoutRate: Double
    /// Share of calls answered 429 with `Retry-After`.
    public var rateLimitedRate: Double
    /// The `Retry-After` seconds sent with a 429.
    public var retryAfterSeconds: Int
    /// Share of calls that never answer within any deadline.
    public var hangRate: Double

    /// Creates a rule; the defaults answer at once and inject nothing.
    public init(latency: LatencyDistribution = .immediate, tail: LatencyTail? = nil, unavailableRate: Double = 0,
                gatewayTimeoutRate: Double = 0, rateLimitedRate: Double = 0, retryAfterSeconds: Int = 1,
                hangRate: Double = 0) {
        self.latency = latency
        self.tail = tail
        self.unavailableRate = unavailableRate
        self.gatewayTimeoutRate = gatewayTimeoutRate
        self.rateLimitedRate = rateLimitedRate
        self.retryAfterSeconds = retryAfterSeconds
        self.hangRate = hangRate
    }

    /// A fault drawn for one call.
    enum Fault: Equatable {
        case none, hang, unavailable, gatewayTimeout, rateLimited(retryAfterSeconds: Int)
    }

    func drawFault(_ random: inout SimulatorRandom) -> Fault {
        let total = hangRate + unavailableRate + gatewayTimeoutRate + rateLimitedRate
        guard total > 0 else { return .none }
        var draw = random.unit()
        if draw < hangRate { return .hang }
        draw -= hangRate
        if draw < unavailableRate { return .unavailable }
        draw -= unavailableRate
        if draw < gatewayTimeoutRate { return .gatewayTimeout }
        draw -= gatewayTimeoutRate
        if draw < rateLimitedRate { return .rateLimited(retryAfterSeconds: retryAfterSeconds) }
        return .none
    }

    func drawLatencyMilliseconds(_ random: inout SimulatorRandom) -> Int {
        if let tail, tail.probability > 0, random.unit() < tail.probability {
            return Int(max(0, tail.milliseconds).rounded())
        }
        if case .fixed(let milliseconds) = latency, milliseconds <= 0 { return 0 }
        return Int(max(0, latency.sample(&random)).rounded())
    }
}
