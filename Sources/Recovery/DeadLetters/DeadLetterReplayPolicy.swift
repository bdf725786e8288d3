import Contract

/// Decides whether a dead letter can be replayed, when it is written and again when an operator
/// asks for a replay.
public enum DeadLetterReplayPolicy {
    /// The verdict written into `dlq.replayable` and `dlq.replayable_reason`.
    public struct Verdict: Sendable, Hashable {
        /// Whether a replay can succeed.
        public var isReplayable: Bool
        /// Why, in one line an operator can act on.
        public var reason: String
    }

    /// Judges a dead letter being written. `issuerMayHaveBeenCalled` is true when an issuer call
    /// may have reached the issuer for this request (a replay would repeat it).
    public static func verdict(code: DeadLetterCode, summary: DeadLetterSummary, issuerMayHaveBeenCalled: Bool,
                               nowMs: Int64) -> Verdict {
        if summary.isExpiredApplePay(nowMs: nowMs) {
            return Verdict(isReplayable: false,
                           reason: "Apple Pay window closed: the PassKit nonce is single-use; the app must start a new wallet flow")
        }
        switch code {
        case DeadLetterCode(.unknownVersion):
            return Verdict(isReplayable: true, reason: "replay after deploying a worker that reads this version")
        case DeadLetterCode(.notJSON), DeadLetterCode(.invalidUTF8), DeadLetterCode(.notAnObject),
             DeadLetterCode(.oversize), DeadLetterCode(.missingRequestID), DeadLetterCode(.malformedRequestID),
             .invalidReconcileJob, .invalidReplayOf:
            return Verdict(isReplayable: false, reason: "the message itself is malformed: fix the producer and send a new request")
        case .unauthenticated:
            return Verdict(isReplayable: false,
                           reason: "the message failed its signature check: only its producer can send it again, signed")
        case .reconcileExhausted:
            return Verdict(isReplayable: true, reason: "replay re-runs reconciliation against the issuer's state")
        default:
            if issuerMayHaveBeenCalled && summary.kind == .provision && summary.wallet != .googlePay {
                return Verdict(isReplayable: false,
                               reason: "the issuer may have applied the call and the wallet handshake is single-use: start a new wallet flow")
            }
            if issuerMayHaveBeenCalled && summary.kind != .provision {
                return Verdict(isReplayable: false, reason: "the payment may have been applied: reconcile by transaction reference before retrying")
            }
            return Verdict(isReplayable: true, reason: "the issuer was not called (or the wallet allows a retry): replay once the fault is fixed")
        }
    }

    /// Re-judges a stored dead letter at replay time: the stored verdict, unless time has since
    /// closed an Apple Pay window.
    public static func replayVerdict(provenance: DeadLetterProvenance, summary: DeadLetterSummary, nowMs: Int64) -> Verdict {
        if summary.isExpiredApplePay(nowMs: nowMs) {
            return Verdict(isReplayable: false,
                           reason: "Apple Pay window closed: the PassKit nonce is single-use; the app must start a new wallet flow")
        }
        return Verdict(isReplayable: provenance.isReplayable, reason: provenance.replayableReason)
    }
}
