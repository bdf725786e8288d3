import Contract
import HTTP
import Issuers
import Simulator
import Testing

/// Reconciliation after indeterminate calls, and Worldpay follow-ups through action links.
@Suite(.timeLimit(.minutes(5))) struct ReconciliationTests {
    let fixture: SimulatorFixture

    init() throws {
        fixture = try SimulatorFixture()
    }

    private func reconcile(_ query: ReconcileQuery, _ endpoint: IssuerEndpoint, budgetMs: Int64 = 2_000) async -> ReconcileAnswer {
        await fixture.client.reconcile(query, endpoint: endpoint, publishByMs: WallClock.nowMs() + budgetMs)
    }

    private func isApplied(_ answer: ReconcileAnswer) -> Bool {
        if case .applied = answer { return true }
        return false
    }

    @Test func imprintAppliedTimeoutIsFoundForThisWalletAndDevice() async throws {
        let windowStart = WallClock.nowMs()
        let device = try SimulatedDevice()
        let handshake = try device.appleHandshake()
        let apple = SimulatorFixture.appleRequest(handshake, card: SimulatorFixture.card("-timeout-applied"))
        let (report, _, _) = await fixture.provision(apple, fixture.endpoint(.imprint))
        #expect(report.outcome.status == .indeterminate && !report.outcome.isFinal, "\(report.summary)")

        let query = ReconcileQuery(request: apple, windowStartMs: windowStart)
        #expect(query.deviceRef == handshake.deviceRef, "the device_ref helper matches the simulator's")
        let answer = await reconcile(query, fixture.endpoint(.imprint))
        #expect(isApplied(answer), "\(answer)")

        var otherDevice = query
        otherDevice.deviceRef = try SimulatedDevice().appleDeviceRef
        #expect(await reconcile(otherDevice, fixture.endpoint(.imprint)) == .notApplied)
        var otherWallet = query
        otherWallet.wallet = .googleWallet
        otherWallet.deviceRef = nil
        #expect(await reconcile(otherWallet, fixture.endpoint(.imprint)) == .notApplied)
        var laterWindow = query
        laterWindow.windowStartMs = WallClock.nowMs() + 10_000
        guard case .alreadyPresent = await reconcile(laterWindow, fixture.endpoint(.imprint)) else {
            Issue.record("a token from before the window is an earlier attempt's: the card is already there")
            return
        }
        var anyDevice = query
        anyDevice.deviceRef = nil
        #expect(isApplied(await reconcile(anyDevice, fixture.endpoint(.imprint))))
    }

    /// A card already in the device's wallet (an earlier request provisioned it): a later call for
    /// the same card and device whose answer was lost is `alreadyPresent` (the issuer answers such
    /// a call 409 `already_provisioned`), never "not applied".
    @Test func imprintRecurringCardOnOneDeviceIsAlreadyPresent() async throws {
        let device = try SimulatedDevice()
        let card = SimulatorFixture.card()
        let first = SimulatorFixture.appleRequest(try device.appleHandshake(), card: card)
        let (report, _, _) = await fixture.provision(first, fixture.endpoint(.imprint))
        #expect(report.outcome.status == .provisioned, "\(report.summary)")
        var second = SimulatorFixture.appleRequest(try device.appleHandshake(), card: card)
        second.requestID = "req-second"
        let query = ReconcileQuery(request: second, windowStartMs: WallClock.nowMs())
        #expect(query.handshakeRef != ReconcileQuery(request: first, windowStartMs: 0).handshakeRef)
        guard case .alreadyPresent = await reconcile(query, fixture.endpoint(.imprint)) else {
            Issue.record("the earlier request's token puts the card in that wallet on that device")
            return
        }
        guard case .applied = await reconcile(ReconcileQuery(request: first, windowStartMs: WallClock.nowMs() - 60_000),
                                              fixture.endpoint(.imprint)) else {
            Issue.record("the first request's own token is found by its handshake")
            return
        }
    }

    @Test func imprintGoogleAppliedTimeoutUsesTheDeviceIDHash() async throws {
        let handshake = try SimulatedDevice().googleHandshake(opcRequested: false)
        let request = SimulatorFixture.googleRequest(handshake, wallet: .googlePay, card: SimulatorFixture.card("-timeout-applied"))
        _ = await fixture.provision(request, fixture.endpoint(.imprint))
        let query = ReconcileQuery(request: request, windowStartMs: WallClock.nowMs() - 1_000)
        #expect(query.deviceRef == handshake.deviceRef)
        // Found by the device id's hash; a Legacy reference recurs across attempts, so the token
        // cannot be told from another attempt's: not attributable (check_wallet), never not applied.
        guard case .notAttributable = await reconcile(query, fixture.endpoint(.imprint)) else {
            Issue.record("the Legacy token made since the window's start was not found as this device's, or was attributed")
            return
        }
    }

    @Test func imprintUnappliedTimeoutAndMissingCardAreNotApplied() async throws {
        for suffix in ["-timeout-unapplied", "-missing", "-foreign"] {
            let request = SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card(suffix))
            _ = await fixture.provision(request, fixture.endpoint(.imprint))
            #expect(await reconcile(ReconcileQuery(request: request, windowStartMs: WallClock.nowMs() - 1_000), fixture.endpoint(.imprint))
                == .notApplied, "\(suffix)")
        }
    }

    @Test func issuersWithoutAStateAPIAnswerAtOnce() async throws {
        let proxy = try RecordingProxy(target: fixture.base)
        let apple = SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card("-timeout-applied"), userID: "u")
        for issuer in [IssuerKind.dcs, .gnosis] {
            #expect(await reconcile(ReconcileQuery(request: apple, windowStartMs: 0), fixture.endpoint(issuer, base: proxy.base)) == .noStateAPI)
        }
        #expect(proxy.exchanges.isEmpty)
    }

    @Test func queryFailuresAreUnknown() async throws {
        let request = SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card())
        let query = ReconcileQuery(request: request, windowStartMs: 0)
        let closed = LoopbackPorts.refusing()
        guard case .unknown = await reconcile(query, fixture.endpoint(.imprint, base: "http://127.0.0.1:\(closed.port)")) else {
            Issue.record("an unreachable issuer says nothing about the token")
            return
        }
        guard case .unknown = await reconcile(query, fixture.endpoint(.imprint), budgetMs: 50) else {
            Issue.record("below the minimum budget the query is not sent")
            return
        }
        var wrongKey = fixture.endpoint(.imprint)
        wrongKey.credentials.apiKey = Sensitive("nope")
        guard case .unknown(let reason) = await reconcile(query, wrongKey) else {
            Issue.record("a rejected query is unknown")
            return
        }
        #expect(reason.contains("401") && !reason.contains("nope"))
    }

    // MARK: Worldpay

    private func authorize(_ reference: String, autoSettle: Bool = false) async throws -> PaymentResult {
        let (report, _, _) = await fixture.provision(SimulatorFixture.paymentRequest(reference: reference, autoSettle: autoSettle),
                                                     fixture.endpoint(.worldpay))
        #expect(report.outcome.status == .authorized, "\(report.summary)")
        return try #require(report.payment)
    }

    private func follow(_ kind: PaymentActionKind, _ link: Sensitive?, reference: String, amount: PaymentAmount? = nil,
                        endpoint: IssuerEndpoint? = nil) async throws -> IssuerCallReport {
        let action = PaymentActionInstruction(action: kind, link: try #require(link), amount: amount, transactionReference: reference)
        return await fixture.client.paymentAction(action, endpoint: endpoint ?? fixture.endpoint(.worldpay), publishByMs: WallClock.nowMs() + 2_000)
    }

    @Test func authorizeThenSettleThroughTheLink() async throws {
        let reference = "order-" + SimulatorFixture.card()
        let authorized = try await authorize(reference)
        let settled = try await follow(.settle, authorized.links?.settle, reference: reference)
        #expect(settled.outcome.status == .settled && settled.outcome.isFinal && settled.httpStatus == 202, "\(settled.summary)")
        #expect(settled.payment?.outcome == "sentForSettlement")
        let calls = try await fixture.calls(cardID: reference)
        #expect(calls.contains { $0.handshake == "settle" && $0.count == 1 })
        let state = await reconcile(ReconcileQuery(requestID: "r", kind: .payment, wallet: .applePay, cardID: Sensitive("c"), deviceRef: nil,
                                                   windowStartMs: 0, transactionReference: reference), fixture.endpoint(.worldpay))
        guard case .payment(let result) = state else {
            Issue.record("expected the payment's state, got \(state)")
            return
        }
        #expect(result.outcome == "settled")
        // A second settle of a settled payment is refused by Worldpay.
        let again = try await follow(.settle, authorized.links?.settle, reference: reference)
        #expect(again.outcome.status == .rejected && again.httpStatus == 409, "\(again.summary)")
    }

    @Test func authorizeThenCancelThroughTheLink() async throws {
        let reference = "order-" + SimulatorFixture.card()
        let authorized = try await authorize(reference)
        let cancelled = try await follow(.cancel, authorized.links?.cancel, reference: reference)
        #expect(cancelled.outcome.status == .cancelled && cancelled.payment?.outcome == "sentForCancellation", "\(cancelled.summary)")
    }

    @Test func authorizeThenPartiallySettle() async throws {
        let reference = "order-" + SimulatorFixture.card()
        let authorized = try await authorize(reference)
        let partial = try await follow(.partialSettle, authorized.links?.partialSettle, reference: reference,
                                       amount: PaymentAmount(currency: "GBP", value: 100))
        #expect(partial.outcome.status == .settled && partial.payment?.outcome == "sentForPartialSettlement", "\(partial.summary)")
        #expect(partial.payment?.links?.settle != nil, "the rest can still be settled")
        let tooMuch = try await follow(.partialSettle, partial.payment?.links?.partialSettle, reference: reference,
                                       amount: PaymentAmount(currency: "GBP", value: 10_000))
        #expect(tooMuch.outcome.status == .rejected && tooMuch.outcome.issuerCode == "amountTooHigh", "\(tooMuch.summary)")
    }

    @Test func timeoutAfterAuthorizingIsReconciledToAuthorized() async throws {
        let reference = "order-" + SimulatorFixture.card("-timeout-applied")
        let (report, _, _) = await fixture.provision(SimulatorFixture.paymentRequest(reference: reference), fixture.endpoint(.worldpay))
        #expect(report.outcome.status == .indeterminate && report.outcome.code == .issuerTimeout && !report.outcome.isFinal, "\(report.summary)")
        let state = await reconcile(ReconcileQuery(requestID: "r", kind: .payment, wallet: .applePay, cardID: Sensitive("c"), deviceRef: nil,
                                                   windowStartMs: 0, transactionReference: reference), fixture.endpoint(.worldpay))
        guard case .payment(let result) = state else {
            Issue.record("the authorization made before the 504 must be found, got \(state)")
            return
        }
        #expect(result.outcome == "authorized")
        #expect(OutcomeTable.outcome(for: .payment(result), issuer: .worldpay, wallet: .applePay, kind: .payment).status == .authorized)
        // The links from the events query work like the authorization's.
        let settled = try await follow(.settle, result.links?.settle, reference: reference)
        #expect(settled.outcome.status == .settled, "\(settled.summary)")
    }

    @Test func timeoutWithoutAuthorizingIsNotApplied() async throws {
        let reference = "order-" + SimulatorFixture.card("-timeout-unapplied")
        _ = await fixture.provision(SimulatorFixture.paymentRequest(reference: reference), fixture.endpoint(.worldpay))
        #expect(await reconcile(ReconcileQuery(requestID: "r", kind: .payment, wallet: .applePay, cardID: Sensitive("c"), deviceRef: nil,
                                               windowStartMs: 0, transactionReference: reference), fixture.endpoint(.worldpay)) == .notApplied)
    }

    @Test func forgedLinkToAnotherOriginIsRefusedWithoutACall() async throws {
        let reference = "order-" + SimulatorFixture.card()
        let authorized = try await authorize(reference)
        let settle = try #require(authorized.links?.settle?.revealed)
        // An attacker's server on another port of the same host, and on another host name.
        let attacker = try RecordingProxy(target: fixture.base)
        let path = String(settle.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
        for forged in [attacker.base + path, "http://localhost:\(fixture.simulator.port)" + path, "https://127.0.0.1:\(fixture.simulator.port)" + path] {
            let report = try await follow(.settle, Sensitive(forged), reference: reference)
            #expect(report.outcome.status == .rejected && report.outcome.code == .invalidRequest && report.attempts == 0, "\(report.summary)")
            #expect(!report.requestMayHaveBeenSent)
        }
        #expect(attacker.exchanges.isEmpty, "no request, and so no API key, reached the forged host")
        #expect(try await fixture.calls(cardID: reference).allSatisfy { $0.handshake != "settle" })
        let notWorldpay = try await follow(.settle, Sensitive(settle), reference: reference, endpoint: fixture.endpoint(.imprint))
        #expect(notWorldpay.outcome.code == .kindUnsupported && notWorldpay.attempts == 0)
    }
}
