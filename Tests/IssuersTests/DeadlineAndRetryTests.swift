import Contract
import HTTP
import Issuers
import Simulator
import Testing

/// Per-attempt timeouts from the deadline budget, the one retry and when it must not happen,
/// against the simulator and against sockets that refuse or drop connects.
@Suite(.timeLimit(.minutes(5))) struct DeadlineAndRetryTests {
    let fixture: SimulatorFixture

    init() throws {
        fixture = try SimulatorFixture()
    }

    private static func request(for issuer: IssuerKind, card: String) throws -> ProvisioningRequest {
        switch issuer {
        case .imprint, .gnosis: SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: card)
        case .dcs: SimulatorFixture.googleRequest(try SimulatedDevice().googleHandshake(opcRequested: false), wallet: .googleWallet,
                                                  card: card, userID: "u_1")
        case .worldpay: SimulatorFixture.paymentRequest(reference: card)
        }
    }

    @Test(arguments: IssuerKind.allCases)
    func hangEndsAtTheBudgetAndNeverPastPublishBy(issuer: IssuerKind) async throws {
        let card = SimulatorFixture.card("-hang")
        let (report, elapsed, publishBy, finishedAt) = await fixture.provisionTimed(try Self.request(for: issuer, card: card),
                                                                                    fixture.endpoint(issuer), budgetMs: 300)
        #expect(report.answer == .transportFailure(.timedOutAfterSend), "\(issuer): \(report.summary)")
        #expect(report.outcome.status == .indeterminate && report.outcome.code == .issuerTimeout && !report.outcome.isFinal)
        #expect(report.attempts == 1 && report.requestMayHaveBeenSent && report.httpStatus == nil)
        // Never early (timers are only ever late); late by at most what a busy machine adds.
        #expect(elapsed >= 280 && elapsed < 1_300, "\(issuer): a 300 ms budget took \(elapsed) ms")
        #expect(finishedAt <= publishBy + 1_000, "\(issuer): finished \(finishedAt - publishBy) ms after publishBy")
        #expect(report.issuerMs >= 280 && report.issuerMs < 1_300, "\(issuer): \(report.issuerMs) ms")
    }

    /// The rule itself, with the clock passed in: the attempt's timeout is
    /// `publishBy − clock() − completionMarginMs`. A client clock 1.7 s ahead of the wall clock turns
    /// a wall-clock budget of 2 s into 300 ms; a client reading any other clock would wait about 2 s.
    @Test(arguments: IssuerKind.allCases)
    func hangEndsWhereTheClientsClockSaysTheBudgetEnds(issuer: IssuerKind) async throws {
        let fixture = try SimulatorFixture(clock: { WallClock.nowMs() + 1_700 })
        let card = SimulatorFixture.card("-hang")
        let (report, elapsed, publishBy, finishedAt) = await fixture.provisionTimed(try Self.request(for: issuer, card: card),
                                                                                    fixture.endpoint(issuer), budgetMs: 2_000)
        #expect(report.answer == .transportFailure(.timedOutAfterSend), "\(issuer): \(report.summary)")
        let ruleMs = Double(2_000 - 1_700 - IssuerClient.completionMarginMs)
        #expect(elapsed >= ruleMs - 10 && elapsed < 1_500, "\(issuer): \(ruleMs) ms by the client's clock took \(elapsed) ms")
        #expect(finishedAt < publishBy, "\(issuer): finished \(finishedAt - publishBy) ms after publishBy")
    }

    @Test func endpointTimeoutBoundsAnAttemptWithinALargerBudget() async throws {
        var endpoint = fixture.endpoint(.imprint)
        endpoint.timeoutMs = 200
        let (report, elapsed, _) = await fixture.provision(try Self.request(for: .imprint, card: SimulatorFixture.card("-slow-1000")), endpoint,
                                                           budgetMs: 5_000)
        #expect(report.answer == .transportFailure(.timedOutAfterSend), "\(report.summary)")
        #expect(report.attempts == 1, "a timeout after sending is never retried")
        #expect(report.outcome.httpStatus == nil, "no answer, no status")
        // The answer would take 1 s: ending well before it shows the 200 ms endpoint timeout held.
        #expect(elapsed >= 195 && elapsed < 600, "\(elapsed) ms")
    }

    @Test func slowAnswerWithinBudgetIsTimedInIssuerMs() async throws {
        let (report, _, _) = await fixture.provision(try Self.request(for: .gnosis, card: SimulatorFixture.card("-slow-150")), fixture.endpoint(.gnosis))
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
        #expect(report.issuerMs >= 150 && report.issuerMs < 900, "\(report.issuerMs) ms")
    }

    @Test func budgetBelowMinimumIsAbandonedWithoutACall() async throws {
        for (issuer, budget) in [(IssuerKind.imprint, Int64(99)), (.dcs, 0), (.gnosis, -5_000), (.worldpay, 50)] {
            let card = SimulatorFixture.card()
            let (report, elapsed, _) = await fixture.provision(try Self.request(for: issuer, card: card), fixture.endpoint(issuer, minimumBudgetMs: 100),
                                                               budgetMs: budget)
            #expect(report.answer == .transportFailure(.abandonedBeforeSend), "\(issuer): \(report.summary)")
            #expect(report.outcome.status == .expired && report.outcome.code == .deadlineExceeded && report.outcome.isFinal)
            #expect(report.attempts == 0 && !report.requestMayHaveBeenSent && report.issuerMs == 0)
            // No call (the count below) and no wait for one.
            #expect(elapsed < 1_000, "\(issuer): \(elapsed) ms")
            #expect(try await fixture.callCount(cardID: card) == 0, "\(issuer) must not be called")
        }
    }

    @Test(arguments: IssuerKind.allCases)
    func flakyCardIsRetriedOnceAndSucceeds(issuer: IssuerKind) async throws {
        let card = SimulatorFixture.card("-flaky")
        let (report, _, _) = await fixture.provision(try Self.request(for: issuer, card: card), fixture.endpoint(issuer))
        #expect(report.outcome.status == (issuer == .worldpay ? .authorized : .provisioned), "\(issuer): \(report.summary)")
        #expect(report.attempts == 2 && report.httpStatus == (issuer == .worldpay ? 201 : 200))
        // The result names the status of the answer it rests on, not the first attempt's 503.
        #expect(report.outcome.httpStatus == report.httpStatus, "\(issuer): outcome http_status \(String(describing: report.outcome.httpStatus))")
        let calls = try await fixture.calls(cardID: card)
        #expect(calls.count == 1 && calls.first?.count == 2, "\(issuer): one handshake called twice, saw \(calls)")
    }

    @Test func dcsRetryIsSignedAfresh() async throws {
        let proxy = try RecordingProxy(target: fixture.base)
        let (report, _, _) = await fixture.provision(try Self.request(for: .dcs, card: SimulatorFixture.card("-flaky")),
                                                     fixture.endpoint(.dcs, base: proxy.base))
        #expect(report.outcome.status == .provisioned && report.attempts == 2, "\(report.summary)")
        let sends = proxy.exchanges.map(\.request)
        try #require(sends.count == 2)
        #expect(sends[0].header("X-DAPI-NONCE") != sends[1].header("X-DAPI-NONCE"), "a fresh nonce per HTTP send")
        #expect(sends[0].body == sends[1].body)
        for send in sends {
            let expected = DCSSignature.sign(secret: "sim-dcs-secret", apiKey: "sim-dcs-key", timestamp: send.header("X-DAPI-TIMESTAMP") ?? "",
                                             nonce: send.header("X-DAPI-NONCE") ?? "", body: send.body)
            #expect(send.header("X-DAPI-SIGN") == expected)
        }
        #expect(proxy.exchanges.map(\.response.status) == [503, 200])
    }

    @Test func refusedConnectIsRetriedExactlyOnce() async throws {
        let closed = LoopbackPorts.refusing()
        let (report, elapsed, _) = await fixture.provision(try Self.request(for: .imprint, card: SimulatorFixture.card()),
                                                           fixture.endpoint(.imprint, base: "http://127.0.0.1:\(closed.port)"), budgetMs: 2_000)
        #expect(report.answer == .transportFailure(.notSent), "\(report.summary)")
        #expect(report.attempts == 2 && !report.requestMayHaveBeenSent && report.httpStatus == nil)
        #expect(report.outcome.status == .failed && report.outcome.code == .issuerUnavailable && report.outcome.nextAction == .restartWalletFlow)
        #expect(elapsed < 500)
    }

    @Test func connectTimeoutIsRetriedOnlyWhileBudgetRemains() async throws {
        let dropping = LoopbackPorts.silentlyDropping()
        let fixture = try SimulatorFixture(httpConfiguration: HTTPClientConfiguration(connectTimeoutMs: 150))
        let endpoint = fixture.endpoint(.gnosis, base: "http://127.0.0.1:\(dropping.port)", minimumBudgetMs: 200)
        // 1 s: the first connect gives up after 150 ms, 850 ms remain, so one retry.
        let roomy = await fixture.provision(try Self.request(for: .gnosis, card: SimulatorFixture.card()), endpoint, budgetMs: 1_000)
        #expect(roomy.report.answer == .transportFailure(.notSent) && roomy.report.attempts == 2, "\(roomy.report.summary)")
        // Two 150 ms connects (never shorter); ended by them, not by the 1 s budget (which would
        // also have said abandoned_before_send, not not_sent).
        #expect(roomy.elapsedMs >= 290 && roomy.elapsedMs < 990, "\(roomy.elapsedMs) ms")
        // 300 ms: after the first 150 ms connect only 150 ms remain, under the 200 ms minimum: no retry.
        let tight = await fixture.provision(try Self.request(for: .gnosis, card: SimulatorFixture.card()), endpoint, budgetMs: 300)
        #expect(tight.report.answer == .transportFailure(.notSent) && tight.report.attempts == 1, "\(tight.report.summary)")
        // One 150 ms connect; one attempt and not_sent (not abandoned_before_send) show it was not the budget that ended it.
        #expect(tight.elapsedMs >= 145 && tight.elapsedMs < 1_300, "\(tight.elapsedMs) ms")
        #expect(!tight.report.requestMayHaveBeenSent)
    }

    @Test func connectStillPendingWhenTheBudgetEndsIsAbandoned() async throws {
        let dropping = LoopbackPorts.silentlyDropping()
        let (report, elapsed, _) = await fixture.provision(try Self.request(for: .imprint, card: SimulatorFixture.card()),
                                                           fixture.endpoint(.imprint, base: "http://127.0.0.1:\(dropping.port)"), budgetMs: 250)
        #expect(report.answer == .transportFailure(.abandonedBeforeSend), "\(report.summary)")
        #expect(report.outcome.status == .expired && report.attempts == 1 && !report.requestMayHaveBeenSent)
        // abandoned_before_send says the budget ended it; never before the budget, late by what a busy machine adds.
        #expect(elapsed >= 240 && elapsed < 1_250, "\(elapsed) ms")
    }

    @Test func rateLimitWithRetryAfterThatFitsIsWaitedOutThenRetried() async throws {
        let limited = SimulatorProfile(seed: 1, allIssuers: LoadRule(rateLimitedRate: 1, retryAfterSeconds: 1))
        let fixture = try SimulatorFixture(profile: limited)
        let card = SimulatorFixture.card()
        let pending = Task { await fixture.provision(try Self.request(for: .imprint, card: card), fixture.endpoint(.imprint), budgetMs: 4_000) }
        // The outage ends while the client waits out Retry-After.
        var seen = 0
        for _ in 0..<200 where seen == 0 {
            seen = try await fixture.callCount(cardID: card)
            if seen == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(seen == 1)
        fixture.simulator.replaceProfile(SimulatorProfile(seed: 1))
        let (report, elapsed, _) = try await pending.value
        #expect(report.outcome.status == .provisioned && report.attempts == 2, "\(report.summary)")
        #expect(elapsed >= 1_000 && elapsed < 2_500, "waited the 1 s Retry-After: \(elapsed) ms")
        #expect(report.issuerMs < 500, "the wait is not issuer time: \(report.issuerMs) ms")
        #expect(try await fixture.callCount(cardID: card) == 2)
    }

    @Test func rateLimitWhoseWaitWouldEatTheMinimumBudgetIsAnsweredAtOnce() async throws {
        let fixture = try SimulatorFixture(profile: SimulatorProfile(seed: 1, allIssuers: LoadRule(rateLimitedRate: 1, retryAfterSeconds: 1)))
        let card = SimulatorFixture.card()
        // 1.2 s left: waiting 1 s would leave 200 ms, below the 500 ms minimum.
        let (report, elapsed, _) = await fixture.provision(try Self.request(for: .worldpay, card: card),
                                                           fixture.endpoint(.worldpay, minimumBudgetMs: 500), budgetMs: 1_200)
        #expect(report.outcome.status == .failed && report.outcome.code == .rateLimited && report.attempts == 1, "\(report.summary)")
        #expect(report.outcome.nextAction == .retry, "an unauthorized payment may be retried")
        #expect(elapsed < 900, "answered without waiting the 1 s Retry-After: \(elapsed) ms")
        #expect(try await fixture.callCount(cardID: card) == 1)
    }

    @Test func aRetryWhoseWaitOverranTheBudgetReportsTheFirstAnswer() async throws {
        // The clock jumps 1.5 s forward while Retry-After (1 s) is waited out: the retry is not sent.
        let skew = Skew()
        let fixture = try SimulatorFixture(profile: SimulatorProfile(seed: 1, allIssuers: LoadRule(rateLimitedRate: 1, retryAfterSeconds: 1)),
                                           clock: { WallClock.nowMs() + skew.offsetMs })
        let card = SimulatorFixture.card()
        let pending = Task { await fixture.provision(try Self.request(for: .imprint, card: card), fixture.endpoint(.imprint, minimumBudgetMs: 200),
                                                     budgetMs: 1_500) }
        while try await fixture.callCount(cardID: card) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        skew.offsetMs = 600
        let (report, _, _) = try await pending.value
        #expect(report.outcome.code == .rateLimited && report.attempts == 1 && report.httpStatus == 429, "\(report.summary)")
        #expect(try await fixture.callCount(cardID: card) == 1)
    }
}
