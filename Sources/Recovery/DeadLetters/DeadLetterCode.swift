import Contract

/// Why a message was dead-lettered: the decoder's causes plus the pipeline's own.
public struct DeadLetterCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The value of the `dlq.code` header.
    public var rawValue: String
    /// Creates a code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A decoder cause (`not_json`, `unknown_version`, …).
    public init(_ cause: DeadLetterCause.Code) { self.rawValue = cause.rawValue }

    /// The result (or dead letter) could not be published after every retry.
    public static let publishFailed = DeadLetterCode(rawValue: "publish_failed")
    /// Reconciliation ran out of attempts without a definitive answer.
    public static let reconcileExhausted = DeadLetterCode(rawValue: "reconcile_exhausted")
    /// A reconciliation job record could not be read.
    public static let invalidReconcileJob = DeadLetterCode(rawValue: "invalid_reconcile_job")
    /// A message's `x-replay-of` header is not `topic:partition:offset` within 256 bytes (only
    /// `dlq replay` writes it; anything else is malformed or forged). Never replayable.
    public static let invalidReplayOf = DeadLetterCode(rawValue: "invalid_replay_of")

    /// The message failed its program's signature check (missing, wrong, stale): it got no
    /// answer. Never replayable: only its producer can sign it again.
    public static let unauthenticated = DeadLetterCode(rawValue: "unauthenticated")

    /// Every code the project defines (the decoder's causes and the statics above): the only
    /// values the `code` label of `provisioner_dead_letters_total` takes. Add a new code here too.
    public static let defined: Set<DeadLetterCode> = Set(DeadLetterCause.Code.allCases.map(DeadLetterCode.init))
        .union([.publishFailed, .reconcileExhausted, .invalidReconcileJob, .invalidReplayOf, .unauthenticated])

    public var description: String { rawValue }

    /// What an audit event says of a dead letter with this code (the code itself, as a fixed text).
    public var auditReason: AuditReason {
        if let cause = DeadLetterCause.Code(rawValue: rawValue) { return AuditReason(cause) }
        switch self {
        case .publishFailed: return AuditReason("publish_failed")
        case .reconcileExhausted: return AuditReason("reconcile_exhausted")
        case .invalidReplayOf: return AuditReason("invalid_replay_of")
        case .unauthenticated: return AuditReason("unauthenticated")
        default: return AuditReason("invalid_reconcile_job")
        }
    }
}
