import Contract

/// What can be read, leniently, from a dead-lettered request: enough to list, filter and judge a
/// replay without trusting the message. Holds no secret.
public struct DeadLetterSummary: Sendable, Hashable {
    /// `request_id`, when readable.
    public var requestID: String?
    /// `program`, when readable.
    public var program: String?
    /// `wallet`, when readable.
    public var wallet: Wallet?
    /// `kind`, when readable (default `provision`).
    public var kind: RequestKind
    /// The effective deadline, when the window could be computed.
    public var deadlineMs: Int64?
    /// Whether the value is a reconciliation job (a `reconcile_exhausted` dead letter) rather than
    /// a request: replaying it asks the issuer for its state and never reuses a wallet handshake.
    public var isReconcileJob = false

    /// Reads the summary of `value`; `recordTimestampMs` stands in for a missing `started_at`.
    public init(value: [UInt8]?, recordTimestampMs: Int64?, deadlines: DeadlinePolicy = DeadlinePolicy()) {
        kind = .provision
        guard let value, let document = try? JSONParser(maxDepth: 64, maxBytes: 1 << 20).parse(value),
              document.objectValue != nil else { return }
        requestID = document["request_id"]?.stringValue.map(AuditEvent.safeIdentifier)
        program = document["program"]?.stringValue.map(AuditEvent.safeIdentifier)
        wallet = document["wallet"]?.stringValue.flatMap(Wallet.init(rawValue:))
        kind = document["kind"]?.stringValue.flatMap(RequestKind.init(rawValue:)) ?? .provision
        isReconcileJob = ReconcileJob.decode(value) != nil
        guard let wallet else { return }
        let startedAt = document["started_at"]?.stringValue.flatMap(RFC3339.parse)
        let deadline = document["deadline"]?.stringValue.flatMap(RFC3339.parse)
        guard startedAt != nil || deadline != nil || recordTimestampMs != nil else { return }
        let reference = startedAt ?? recordTimestampMs ?? deadline ?? 0
        deadlineMs = deadlines.window(kind: kind, wallet: wallet, startedAtMs: startedAt, deadlineMs: deadline,
                                      recordTimestampMs: recordTimestampMs, receivedAtMs: reference).deadlineMs
    }

    /// Whether this is an Apple Pay request whose window has closed: its single-use handshake can
    /// never succeed, so it is stripped and never replayed. Never true of a reconciliation job.
    public func isExpiredApplePay(nowMs: Int64) -> Bool {
        guard wallet == .applePay, kind == .provision, !isReconcileJob else { return false }
        guard let deadlineMs else { return true }
        return nowMs >= deadlineMs
    }
}
