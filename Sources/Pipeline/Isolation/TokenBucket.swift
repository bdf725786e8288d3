/// A token bucket limiting calls toward an issuer: `ratePerSecond` tokens refill continuously up to `burst`.
public struct TokenBucket: Sendable {
    /// Tokens added per second.
    public private(set) var ratePerSecond: Double
    /// The most tokens the bucket holds.
    public private(set) var burst: Double
    private var tokens: Double
    private var refilledAtMs: Int64

    /// Creates a full bucket.
    public init(ratePerSecond: Double, burst: Double, nowMs: Int64) {
        self.ratePerSecond = max(ratePerSecond, 0.000_001)
        self.burst = max(burst, 1)
        self.tokens = self.burst
        self.refilledAtMs = nowMs
    }

    /// Tokens available now (fractional).
    public mutating func available(nowMs: Int64) -> Double {
        refill(nowMs: nowMs)
        return tokens
    }

    /// Takes one token if one is available now.
    public mutating func tryTake(nowMs: Int64) -> Bool {
        refill(nowMs: nowMs)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// The earliest time at which one token will be available.
    public mutating func nextTokenAtMs(nowMs: Int64) -> Int64 {
        refill(nowMs: nowMs)
        if tokens >= 1 { return nowMs }
        let missing = 1 - tokens
        return nowMs + Int64((missing / ratePerSecond * 1000).rounded(.up))
    }

    /// Changes the rate and burst from now on (a rebalance changed the worker's share): tokens
    /// earned so far count at the old rate, and what is held is cut to the new burst, never raised.
    public mutating func reconfigure(ratePerSecond: Double, burst: Double, nowMs: Int64) {
        refill(nowMs: nowMs)
        self.ratePerSecond = max(ratePerSecond, 0.000_001)
        self.burst = max(burst, 1)
        tokens = min(tokens, self.burst)
    }

    private mutating func refill(nowMs: Int64) {
        guard nowMs > refilledAtMs else { return }
        tokens = min(burst, tokens + Double(nowMs - refilledAtMs) * ratePerSecond / 1000)
        refilledAtMs = nowMs
    }
}
