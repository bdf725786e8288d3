import Contract

/// Which dead letters an operator command applies to (`--code --program --wallet --since --until
/// --request-id --limit`); every given criterion must match.
public struct DeadLetterFilter: Sendable {
    /// `dlq.code` equals this.
    public var code: String?
    /// The request's program equals this.
    public var program: String?
    /// The request's wallet equals this.
    public var wallet: Wallet?
    /// Dead-lettered at or after this time (epoch ms).
    public var sinceMs: Int64?
    /// Dead-lettered before this time (epoch ms).
    public var untilMs: Int64?
    /// The request's `request_id` equals this.
    public var requestID: String?
    /// At most this many entries (oldest first).
    public var limit: Int?

    /// Matches everything.
    public init() {}

    /// Whether `entry` matches every criterion given.
    public func matches(_ entry: DeadLetterEntry) -> Bool {
        if let code, entry.provenance?.code.rawValue != code { return false }
        if let program, entry.summary.program != program { return false }
        if let wallet, entry.summary.wallet != wallet { return false }
        let failedAt = entry.provenance?.failedAtMs ?? entry.timestampMs ?? 0
        if let sinceMs, failedAt < sinceMs { return false }
        if let untilMs, failedAt >= untilMs { return false }
        if let requestID, entry.summary.requestID != requestID { return false }
        return true
    }
}
