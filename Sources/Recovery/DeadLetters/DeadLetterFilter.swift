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
    /// The entry id (`topic:partition:offset`) equals this.
    public var identifier: String?
    /// Only the newest this many matching entries (listed oldest first); nil: every match, up to
    /// `maximumLimit`.
    public var limit: Int?

    /// The limit `parse` gives when none is asked for (`dlq list`, `dlq replay`, the console).
    public static let defaultLimit = 100
    /// The most entries a read keeps, whatever limit is asked (`parse` reads a larger one as this).
    public static let maximumLimit = 1_000

    /// Matches everything.
    public init() {}

    /// Whether any criterion other than the limit is given.
    public var hasCriteria: Bool {
        code != nil || program != nil || wallet != nil || sinceMs != nil || untilMs != nil || requestID != nil || identifier != nil
    }

    /// Whether `entry` matches every criterion given.
    public func matches(_ entry: DeadLetterEntry) -> Bool {
        if let code, entry.provenance?.code.rawValue != code { return false }
        if let program, entry.summary.program != program { return false }
        if let wallet, entry.summary.wallet != wallet { return false }
        let failedAt = entry.provenance?.failedAtMs ?? entry.timestampMs ?? 0
        if let sinceMs, failedAt < sinceMs { return false }
        if let untilMs, failedAt >= untilMs { return false }
        if let requestID, entry.summary.requestID != requestID { return false }
        if let identifier, entry.identifier != identifier { return false }
        return true
    }
}
