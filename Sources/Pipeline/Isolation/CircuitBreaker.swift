/// A circuit breaker for one issuer endpoint, over a sliding time window of call outcomes.
///
/// Closed: calls pass and their outcomes are counted in one-second buckets. When at least
/// `minimumCalls` outcomes in the window fail at `failureRateThreshold` or more, it opens: calls are
/// refused at once (no issuer call, no wasted budget). After `openDurationMs` it half-opens and lets
/// `halfOpenProbes` calls through; all succeeding closes it, any failing reopens it.
public struct CircuitBreaker: Sendable {
    /// The breaker's settings.
    public struct Settings: Sendable, Equatable {
        /// Length of the sliding window in seconds.
        public var windowSeconds: Int = 10
        /// Outcomes needed in the window before the rate is judged.
        public var minimumCalls: Int = 20
        /// Failure share (0...1) that opens the breaker.
        public var failureRateThreshold: Double = 0.5
        /// How long the breaker stays open before probing.
        public var openDurationMs: Int64 = 5_000
        /// Calls let through while half-open.
        public var halfOpenProbes: Int = 3
        /// Creates the default settings.
        public init() {}
    }

    /// Where the breaker stands.
    public enum State: String, Sendable, CaseIterable {
        case closed, open, halfOpen = "half_open"
    }

    /// What the breaker says about a call.
    public enum Permission: Sendable, Equatable {
        /// Call normally.
        case allow
        /// Call as one of the half-open probes.
        case probe
        /// Do not call: answer `issuer_unavailable` now.
        case reject
    }

    /// The settings in force.
    public let settings: Settings
    /// The current state.
    public private(set) var state: State = .closed
    private var openedAtMs: Int64 = 0
    private var probesStarted = 0
    private var probesSucceeded = 0
    private var buckets: [Bucket]

    private struct Bucket: Sendable {
        var second: Int64 = .min
        var successes = 0
        var failures = 0
    }

    /// Creates a closed breaker.
    public init(settings: Settings = .init()) {
        self.settings = settings
        self.buckets = Array(repeating: Bucket(), count: max(settings.windowSeconds, 1))
    }

    /// Decides whether a call may start now; moves open → half-open when the open period is over.
    /// Returns the permission and the state change it caused, if any.
    public mutating func permission(nowMs: Int64) -> (Permission, State?) {
        switch state {
        case .closed:
            return (.allow, nil)
        case .open:
            guard nowMs - openedAtMs >= settings.openDurationMs else { return (.reject, nil) }
            state = .halfOpen
            probesStarted = 1
            probesSucceeded = 0
            return (.probe, .halfOpen)
        case .halfOpen:
            guard probesStarted < settings.halfOpenProbes else { return (.reject, nil) }
            probesStarted += 1
            return (.probe, nil)
        }
    }

    /// Whether a call would be refused now, without changing anything.
    public func wouldReject(nowMs: Int64) -> Bool {
        switch state {
        case .closed: return false
        case .open: return nowMs - openedAtMs < settings.openDurationMs
        case .halfOpen: return probesStarted >= settings.halfOpenProbes
        }
    }

    /// Records the outcome of a call that was let through; returns the state change it caused, if any.
    public mutating func record(success: Bool, wasProbe: Bool, nowMs: Int64) -> State? {
        switch state {
        case .closed:
            count(success: success, nowMs: nowMs)
            let (successes, failures) = totals(nowMs: nowMs)
            let calls = successes + failures
            if calls >= settings.minimumCalls && Double(failures) >= settings.failureRateThreshold * Double(calls) {
                open(nowMs: nowMs)
                return .open
            }
            return nil
        case .halfOpen:
            guard wasProbe else { return nil }
            if !success {
                open(nowMs: nowMs)
                return .open
            }
            probesSucceeded += 1
            if probesSucceeded >= settings.halfOpenProbes {
                state = .closed
                buckets = Array(repeating: Bucket(), count: buckets.count)
                return .closed
            }
            return nil
        case .open:
            return nil
        }
    }

    /// A probe that was granted but never called (the request expired first) gives its slot back.
    public mutating func releaseProbe() {
        if state == .halfOpen && probesStarted > probesSucceeded { probesStarted -= 1 }
    }

    private mutating func open(nowMs: Int64) {
        state = .open
        openedAtMs = nowMs
        probesStarted = 0
        probesSucceeded = 0
    }

    private mutating func count(success: Bool, nowMs: Int64) {
        let second = nowMs / 1000
        let index = Int(second % Int64(buckets.count))
        if buckets[index].second != second { buckets[index] = Bucket(second: second) }
        if success { buckets[index].successes += 1 } else { buckets[index].failures += 1 }
    }

    private func totals(nowMs: Int64) -> (Int, Int) {
        let oldest = nowMs / 1000 - Int64(buckets.count) + 1
        var successes = 0
        var failures = 0
        for bucket in buckets where bucket.second >= oldest {
            successes += bucket.successes
            failures += bucket.failures
        }
        return (successes, failures)
    }
}
