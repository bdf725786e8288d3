import Contract
import Issuers
import Recovery

/// What a reconciliation makes of the issuer's state answer for one job: a final to publish (with
/// the outcome and, for a payment, its state) or a later tier, and the label it is counted under
/// (`provisioner_reconcile_total{outcome}`). A pure value, so every row of the rule is a test row
/// (`ReconcileReadingTests`); `ReconcileRunner.answered` carries it out.
enum ReconcileReading: Equatable {
    /// Publish this final.
    case publish(Outcome, payment: PaymentResult?, counted: String)
    /// Ask again at the next tier, for `reason` (a fixed text: it goes into the audit trail).
    case retryLater(reason: StaticString, counted: String?)

    static func == (a: ReconcileReading, b: ReconcileReading) -> Bool {
        switch (a, b) {
        case let (.publish(o1, p1, c1), .publish(o2, p2, c2)): o1 == o2 && p1 == p2 && c1 == c2
        case let (.retryLater(r1, c1), .retryLater(r2, c2)): r1.description == r2.description && c1 == c2
        default: false
        }
    }

    /// The facts besides the answer that the rule reads.
    struct Situation {
        /// The job's request kind and wallet (the not-applied final differs by them).
        var kind: RequestKind
        var wallet: Wallet
        /// The job's attempt (1 for its first run).
        var attempt: Int
        /// When the issuer may have applied the call at the latest: its give-up time plus the apply horizon.
        var applyHorizonEndsAtMs: Int64
        var nowMs: Int64
        /// A handed-over job whose previous owner may still answer.
        var previousOwnerMayAnswer: Bool
        /// How many tiers a job without a state query waits for the previous owner's answer.
        var handOverLooks: Int
        /// The fixes the simulation's self-test puts back (none in production).
        var mutations = CoreMutations()
    }

    /// The reading of `answer` in `situation`.
    static func of(_ answer: ReconcileAnswer, in situation: Situation) -> ReconcileReading {
        switch answer {
        case .applied:
            return .publish(OutcomeTable.reconciledApplied(), payment: nil, counted: "applied")
        case .alreadyPresent where situation.mutations.reconcileByTimeOnly:
            return .publish(OutcomeTable.reconciledNotApplied(wallet: situation.wallet, kind: situation.kind), payment: nil, counted: "not_applied")
        case .alreadyPresent:
            return .publish(OutcomeTable.reconciledAlreadyProvisioned(), payment: nil, counted: "already_present")
        case .notApplied where situation.nowMs < situation.applyHorizonEndsAtMs && !situation.mutations.notAppliedAtOnce:
            // The issuer may still apply a call it received late: no trace of it proves nothing yet.
            return .retryLater(reason: "the issuer may still apply the call", counted: "not_applied_yet")
        case .notApplied:
            return .publish(OutcomeTable.reconciledNotApplied(wallet: situation.wallet, kind: situation.kind), payment: nil, counted: "not_applied")
        case .notAttributable where situation.mutations.recurringHandshakeAsOurs:
            return .publish(OutcomeTable.reconciledApplied(), payment: nil, counted: "applied")
        case .notAttributable:
            // The card is in the wallet, by this call or another attempt's: nothing more can be learned.
            return .publish(OutcomeTable.reconcileCheckWallet(), payment: nil, counted: "not_attributable")
        case .noStateAPI where situation.previousOwnerMayAnswer && situation.attempt < situation.handOverLooks:
            return .retryLater(reason: "waiting for the previous owner's answer", counted: nil)
        case .noStateAPI:
            return .publish(OutcomeTable.reconcileCheckWallet(), payment: nil, counted: "no_state_api")
        case .payment(let payment):
            guard let status = WorldpayAdapter.status(ofEvent: payment.outcome) else {
                return .retryLater(reason: "unrecognised payment event", counted: "payment")
            }
            if situation.kind == .paymentAction, status == .authorized, situation.nowMs < situation.applyHorizonEndsAtMs,
               !situation.mutations.actionReadAtOnce {
                // The payment as it was before the action: Worldpay may still carry out an action
                // it received late, so only the horizon's end shows the action did not happen.
                return .retryLater(reason: "Worldpay may still carry out the action", counted: "not_applied_yet")
            }
            return .publish(OutcomeTable.reconciledPayment(status), payment: payment, counted: "payment")
        case .unknown:
            return .retryLater(reason: "the state query gave no usable answer", counted: "unknown")
        }
    }
}

extension ReconcileJob {
    /// When the job's call was given up at the latest: its own indeterminate answer, or, for a
    /// call a previous owner started, the request's deadline (no call outlives its window). The
    /// reading's apply horizon (`Situation.applyHorizonEndsAtMs`) counts from it.
    var callGivenUpAtMs: Int64 {
        handOver == nil ? firstIndeterminateAtMs : max(firstIndeterminateAtMs, deadlineMs)
    }
}
