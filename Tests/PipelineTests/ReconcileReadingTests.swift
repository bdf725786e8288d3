import Contract
import Issuers
import Testing
@testable import Pipeline

/// The reconciliation rule as a table: each issuer state answer, in each situation that changes
/// the reading, and what it becomes (a final with its counted label, or a later tier).
@Suite("What reconciliation makes of the issuer's state")
struct ReconcileReadingTests {
    static let now: Int64 = 1_800_000_000_000

    static func situation(wallet: Wallet = .applePay, kind: RequestKind = .provision, attempt: Int = 1, horizonEndsInMs: Int64 = -1,
                          previousOwnerMayAnswer: Bool = false, mutations: CoreMutations = CoreMutations()) -> ReconcileReading.Situation {
        ReconcileReading.Situation(kind: kind, wallet: wallet, attempt: attempt, applyHorizonEndsAtMs: now + horizonEndsInMs, nowMs: now,
                                   previousOwnerMayAnswer: previousOwnerMayAnswer, handOverLooks: 3, mutations: mutations)
    }

    static let authorized = PaymentResult(outcome: "authorized")
    static let settled = PaymentResult(outcome: "settled")

    static let rows: [(String, ReconcileAnswer, ReconcileReading.Situation, ReconcileReading)] = [
        ("applied", .applied(detail: "t"), situation(), .publish(OutcomeTable.reconciledApplied(), payment: nil, counted: "applied")),
        ("another call's token", .alreadyPresent(detail: "t"), situation(),
         .publish(OutcomeTable.reconciledAlreadyProvisioned(), payment: nil, counted: "already_present")),
        ("no trace before the apply horizon", .notApplied, situation(horizonEndsInMs: 1),
         .retryLater(reason: "the issuer may still apply the call", counted: "not_applied_yet")),
        ("no trace past the apply horizon", .notApplied, situation(wallet: .googlePay),
         .publish(OutcomeTable.reconciledNotApplied(wallet: .googlePay, kind: .provision), payment: nil, counted: "not_applied")),
        ("a Legacy token no state attributes", .notAttributable(detail: "t"), situation(wallet: .googlePay),
         .publish(OutcomeTable.reconcileCheckWallet(), payment: nil, counted: "not_attributable")),
        ("no state query, the previous owner may answer", .noStateAPI, situation(attempt: 2, previousOwnerMayAnswer: true),
         .retryLater(reason: "waiting for the previous owner's answer", counted: nil)),
        ("no state query, the previous owner's looks used up", .noStateAPI, situation(attempt: 3, previousOwnerMayAnswer: true),
         .publish(OutcomeTable.reconcileCheckWallet(), payment: nil, counted: "no_state_api")),
        ("no state query, own call", .noStateAPI, situation(),
         .publish(OutcomeTable.reconcileCheckWallet(), payment: nil, counted: "no_state_api")),
        ("a payment's authorization", .payment(authorized), situation(kind: .payment),
         .publish(OutcomeTable.reconciledPayment(.authorized), payment: authorized, counted: "payment")),
        ("an action's payment still authorized before the apply horizon", .payment(authorized), situation(kind: .paymentAction, horizonEndsInMs: 1),
         .retryLater(reason: "Worldpay may still carry out the action", counted: "not_applied_yet")),
        ("an action's payment still authorized past the apply horizon", .payment(authorized), situation(kind: .paymentAction),
         .publish(OutcomeTable.reconciledPayment(.authorized), payment: authorized, counted: "payment")),
        ("an action's payment settled before the apply horizon", .payment(settled), situation(kind: .paymentAction, horizonEndsInMs: 1),
         .publish(OutcomeTable.reconciledPayment(.settled), payment: settled, counted: "payment")),
        ("a payment event that says nothing final", .payment(PaymentResult(outcome: "sentForRefund")), situation(kind: .payment),
         .retryLater(reason: "unrecognised payment event", counted: "payment")),
        ("an unusable answer", .unknown(reason: "503"), situation(), .retryLater(reason: "the state query gave no usable answer", counted: "unknown")),
    ]

    @Test("each answer in each situation", arguments: rows.indices)
    func row(_ index: Int) {
        let (name, answer, situation, expected) = Self.rows[index]
        #expect(ReconcileReading.of(answer, in: situation) == expected, "\(name)")
    }

    @Test("the fixes the simulation's self-test puts back change exactly their row")
    func mutations() {
        var byTime = CoreMutations()
        byTime.reconcileByTimeOnly = true
        #expect(ReconcileReading.of(.alreadyPresent(detail: "t"), in: Self.situation(wallet: .googleWallet, mutations: byTime))
            == .publish(OutcomeTable.reconciledNotApplied(wallet: .googleWallet, kind: .provision), payment: nil, counted: "not_applied"))
        var atOnce = CoreMutations()
        atOnce.notAppliedAtOnce = true
        #expect(ReconcileReading.of(.notApplied, in: Self.situation(horizonEndsInMs: 1, mutations: atOnce))
            == .publish(OutcomeTable.reconciledNotApplied(wallet: .applePay, kind: .provision), payment: nil, counted: "not_applied"))
        var recurring = CoreMutations()
        recurring.recurringHandshakeAsOurs = true
        #expect(ReconcileReading.of(.notAttributable(detail: "t"), in: Self.situation(wallet: .googlePay, mutations: recurring))
            == .publish(OutcomeTable.reconciledApplied(), payment: nil, counted: "applied"))
        var actionAtOnce = CoreMutations()
        actionAtOnce.actionReadAtOnce = true
        #expect(ReconcileReading.of(.payment(Self.authorized), in: Self.situation(kind: .paymentAction, horizonEndsInMs: 1, mutations: actionAtOnce))
            == .publish(OutcomeTable.reconciledPayment(.authorized), payment: Self.authorized, counted: "payment"))
    }
}
