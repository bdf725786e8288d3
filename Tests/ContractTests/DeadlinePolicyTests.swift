import Contract
import Testing

@Suite("Deadlines", .timeLimit(.minutes(5)))
struct DeadlinePolicyTests {
    let policy = DeadlinePolicy()
    let t0: Int64 = 1_795_946_400_000

    @Test func appleWindowStartsAtStartedAtAndCapsAtTwentySeconds() {
        let window = policy.window(kind: .provision, wallet: .applePay, startedAtMs: t0, deadlineMs: t0 + 60_000,
                                   recordTimestampMs: t0 + 200, receivedAtMs: t0 + 300)
        #expect(window.startMs == t0)
        #expect(window.deadlineMs == t0 + 20_000)
        #expect(window.publishByMs == t0 + 19_000)
        #expect(window.remainingMs(now: t0 + 10_000) == 9_000)
    }

    @Test func earlierRequestDeadlineWins() {
        let window = policy.window(kind: .provision, wallet: .applePay, startedAtMs: t0, deadlineMs: t0 + 19_000,
                                   recordTimestampMs: nil, receivedAtMs: t0)
        #expect(window.deadlineMs == t0 + 19_000)
        #expect(window.publishByMs == t0 + 18_000)
    }

    @Test func startFallsBackToRecordTimestampThenReceipt() {
        let fromRecord = policy.window(kind: .provision, wallet: .googleWallet, startedAtMs: nil, deadlineMs: nil,
                                       recordTimestampMs: t0 + 5, receivedAtMs: t0 + 50)
        #expect(fromRecord.startMs == t0 + 5)
        #expect(fromRecord.deadlineMs == t0 + 5 + 60_000)
        let fromReceipt = policy.window(kind: .provision, wallet: .googlePay, startedAtMs: nil, deadlineMs: nil,
                                        recordTimestampMs: nil, receivedAtMs: t0)
        #expect(fromReceipt.startMs == t0)
    }

    @Test func clocksAheadCannotStretchTheWindow() {
        let window = policy.window(kind: .provision, wallet: .applePay, startedAtMs: t0 + 30_000, deadlineMs: nil,
                                   recordTimestampMs: t0 + 10, receivedAtMs: t0 + 20)
        #expect(window.startMs == t0 + 10)
        let producerAhead = policy.window(kind: .provision, wallet: .applePay, startedAtMs: nil, deadlineMs: nil,
                                          recordTimestampMs: t0 + 5_000, receivedAtMs: t0)
        #expect(producerAhead.startMs == t0)
    }

    @Test func windowLengthsPerKindAndWallet() {
        let custom = DeadlinePolicy(googleWindowMs: 45_000, paymentWindowMs: 25_000, replyMarginMs: 500)
        #expect(custom.windowLengthMs(kind: .provision, wallet: .applePay) == 20_000)
        #expect(custom.windowLengthMs(kind: .provision, wallet: .googleWallet) == 45_000)
        #expect(custom.windowLengthMs(kind: .provision, wallet: .googlePay) == 45_000)
        #expect(custom.windowLengthMs(kind: .payment, wallet: .applePay) == 25_000)
        #expect(custom.windowLengthMs(kind: .paymentAction, wallet: .applePay) == 25_000)
        #expect(DeadlinePolicy().windowLengthMs(kind: .payment, wallet: .applePay) == 30_000)
        let window = custom.window(kind: .payment, wallet: .applePay, startedAtMs: t0, deadlineMs: nil,
                                   recordTimestampMs: nil, receivedAtMs: t0)
        #expect(window.publishByMs == t0 + 24_500)
    }

    @Test func admissionNeedsTheMinimumIssuerBudget() {
        let window = RequestWindow(startMs: t0, deadlineMs: t0 + 20_000, publishByMs: t0 + 19_000)
        #expect(policy.admit(window, nowMs: t0 + 1_000) == .admit(budgetMs: 18_000))
        #expect(policy.admit(window, nowMs: t0 + 18_499).isAdmitted)
        #expect(policy.admit(window, nowMs: t0 + 18_500) == .expired)
        #expect(policy.admit(window, nowMs: t0 + 25_000) == .expired)
        #expect(policy.admit(window, nowMs: t0 + 17_000, minimumIssuerBudgetMs: 3_000) == .expired)
        #expect(policy.admit(window, nowMs: t0 + 15_999, minimumIssuerBudgetMs: 3_000).isAdmitted)
    }

    @Test func decodedRequestWindow() throws {
        let request = try #require(Fixtures.decoded(Fixtures.appleDocument()))
        let window = policy.window(for: request, recordTimestampMs: t0 + 100, receivedAtMs: t0 + 200)
        #expect(window.startMs == t0)
        #expect(window.deadlineMs == t0 + 19_000)
        #expect(window.publishByMs == t0 + 18_000)
        #expect(policy.admit(window, nowMs: t0 + 17_600) == .expired)
    }
}
