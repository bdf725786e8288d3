import Contract
import HTTP
import Issuers
import Testing

/// How each adapter reads answers, including the CONTRACT section 9 checks on success bodies.
/// (The same rows run over real HTTP against the simulator in `SimulatorErrorRowTests`.)
@Suite(.timeLimit(.minutes(5))) struct AdapterAnswerTests {
    private func outcome(_ answer: IssuerAnswer, _ issuer: IssuerKind, _ request: ProvisioningRequest) -> Outcome {
        OutcomeTable.outcome(for: answer, issuer: issuer, wallet: request.wallet, kind: request.kind)
    }

    @Test func imprintSuccessKeepsValuesByteForByte() throws {
        let adapter = ImprintAdapter(endpoint: Requests.endpoint(.imprint))
        let request = Requests.apple()
        let answer = adapter.answer(for: Requests.response(200, #"{"wallet":"apple_pay","provisioning_payload":{"activation_data":"YWN0aXZhdGlvbg==","encrypted_pass_data":"ZW5jcnlwdGVkUGFzcw\/\/","ephemeral_public_key":"ZXBoZW1lcmFsS2V5"}}"#), to: request)
        guard case .success(.apple(let activation, let pass, let key)) = answer else {
            Issue.record("expected an Apple success, got \(answer)")
            return
        }
        #expect(activation.revealed == "YWN0aXZhdGlvbg==")
        #expect(pass.revealed == "ZW5jcnlwdGVkUGFzcw//")
        #expect(key.revealed == "ZXBoZW1lcmFsS2V5")
        #expect(outcome(answer, .imprint, request).status == .provisioned)
    }

    @Test func unusableSuccessBodiesFail() {
        let adapter = ImprintAdapter(endpoint: Requests.endpoint(.imprint))
        let cases: [(ProvisioningRequest, String)] = [
            (Requests.apple(), #"{"provisioning_payload":{"activation_data":"YQ==","encrypted_pass_data":"YQ=="}}"#),
            (Requests.apple(), #"{"provisioning_payload":{"activation_data":"YQ==","encrypted_pass_data":"not base64!","ephemeral_public_key":"YQ=="}}"#),
            (Requests.apple(), #"{"wallet":"google_pay","provisioning_payload":{"activation_data":"YQ==","encrypted_pass_data":"YQ==","ephemeral_public_key":"YQ=="}}"#),
            (Requests.google(opc: true, session: "s"), #"{"provisioning_payload":{"opaque_payment_card":"eyJ"}}"#),
            (Requests.google(.googlePay), #"{"wallet":"google_pay","provisioning_payload":{"opaque_payment_card":"eyJ","wallet_type":"GOOGLE_PAY"}}"#),
            (Requests.apple(), "<html>ok</html>"),
            (Requests.apple(), ""),
        ]
        for (request, body) in cases {
            let answer = adapter.answer(for: Requests.response(200, body), to: request)
            guard case .invalidSuccessResponse = answer else {
                Issue.record("\(body) should be unusable, got \(answer)")
                continue
            }
            let result = outcome(answer, .imprint, request)
            #expect(result.status == .failed && result.code == .upstreamError, "\(body)")
        }
        let withOPC = adapter.answer(for: Requests.response(200, #"{"provisioning_payload":{"opaque_payment_card":"eyJ","google_provisioning_payload":"ZXl"}}"#),
                                     to: Requests.google(opc: true, session: "s"))
        #expect(withOPC == .success(.googleWallet(opaquePaymentCard: Sensitive("eyJ"), googleProvisioningPayload: Sensitive("ZXl"))))
        let legacy = adapter.answer(for: Requests.response(200, #"{"wallet":"google_pay","provisioning_payload":{"opaque_payment_card":"eyJ","network":"VISA","wallet_type":"GOOGLE_PAY"}}"#),
                                    to: Requests.google(.googlePay))
        #expect(legacy == .success(.googlePay(opaquePaymentCard: Sensitive("eyJ"), network: "VISA", walletType: "GOOGLE_PAY", last4: nil)))
    }

    @Test func imprintErrorEnvelope() {
        let adapter = ImprintAdapter(endpoint: Requests.endpoint(.imprint))
        let answer = adapter.answer(for: Requests.response(422, #"{"error":{"code":"device_ineligible","message":"this device cannot accept this card"}}"#),
                                    to: Requests.apple())
        #expect(answer == .issuerError(httpStatus: 422, issuerCode: "device_ineligible", message: Sensitive("this device cannot accept this card")))
        let bare = adapter.answer(for: Requests.response(504, ""), to: Requests.apple())
        #expect(bare == .issuerError(httpStatus: 504, issuerCode: nil, message: nil))
    }

    /// Rows the simulator has no trigger for (no magic card grants a key without card write access).
    @Test func rowsTheSimulatorCannotProduce() {
        let imprint = ImprintAdapter(endpoint: Requests.endpoint(.imprint))
        let request = Requests.apple()
        let denied = imprint.answer(for: Requests.response(403, #"{"error":{"code":"permission_denied","message":"CARD_WRITE missing"}}"#), to: request)
        let deniedOutcome = outcome(denied, .imprint, request)
        #expect(deniedOutcome.status == .rejected && deniedOutcome.code == .permissionDenied && deniedOutcome.issuerCode == "permission_denied")
        let unsupported = imprint.answer(for: Requests.response(400, #"{"error":{"code":"wallet_unsupported","message":"x"}}"#), to: request)
        #expect(outcome(unsupported, .imprint, request).code == .walletUnsupported)
        let gnosis = GnosisAdapter(endpoint: Requests.endpoint(.gnosis))
        let forbidden = gnosis.answer(for: Requests.response(403, #"{"code":"forbidden","message":"x"}"#), to: request)
        let forbiddenOutcome = outcome(forbidden, .gnosis, request)
        #expect(forbiddenOutcome.status == .rejected && forbiddenOutcome.code == .permissionDenied && forbiddenOutcome.httpStatus == 403)
    }

    @Test func dcsEnvelopeAndLimits() {
        let adapter = DCSAdapter(endpoint: Requests.endpoint(.dcs, secret: "s"))
        let request = Requests.apple(userID: "u")
        let ok = adapter.answer(for: Requests.response(200, #"{"code":"SYS_SUCCESS","message":"","messageDetail":null,"data":{"encryptedPassData":"ZQ==","activationData":"YQ==","ephemeralPublicKey":"Yg==","vCardID":"v"}}"#), to: request)
        #expect(ok == .success(.apple(activationData: Sensitive("YQ=="), encryptedPassData: Sensitive("ZQ=="), ephemeralPublicKey: Sensitive("Yg=="))))
        let long = String(repeating: "QUFB", count: 2049)  // 8196 characters: over DCS's 8192
        let tooLong = adapter.answer(for: Requests.response(200, #"{"code":"SYS_SUCCESS","data":{"encryptedPassData":"\#(long)","activationData":"YQ==","ephemeralPublicKey":"Yg=="}}"#), to: request)
        guard case .invalidSuccessResponse = tooLong else {
            Issue.record("a value over 8192 characters must be refused, got \(tooLong)")
            return
        }
        let refused = adapter.answer(for: Requests.response(200, #"{"code":"CARD_STATUS_INVALID","message":"frozen","messageDetail":null,"data":null}"#), to: request)
        #expect(outcome(refused, .dcs, request).code == .cardNotActive)
        let legacy = adapter.answer(for: Requests.response(200, #"{"code":"SYS_SUCCESS","data":{"last4":"4242","opaquePaymentCard":"opc","vCardID":"v"}}"#),
                                    to: Requests.google(.googlePay, userID: "u"))
        #expect(legacy == .success(.googlePay(opaquePaymentCard: Sensitive("opc"), network: "VISA", walletType: nil, last4: "4242")))
        let uppWithoutOPC = adapter.answer(for: Requests.response(200, #"{"code":"SYS_SUCCESS","data":{"last4":"4242","opaquePaymentCard":"opc"}}"#),
                                           to: Requests.google(opc: true, session: "s", userID: "u"))
        guard case .invalidSuccessResponse = uppWithoutOPC else {
            Issue.record("Google OPC requested and missing must fail, never fall back; got \(uppWithoutOPC)")
            return
        }
    }

    @Test func worldpayOutcomes() {
        let adapter = WorldpayAdapter(endpoint: Requests.endpoint(.worldpay))
        let request = Requests.payment()
        let authorized = adapter.answer(for: Requests.response(201, #"{"outcome":"authorized","paymentInstrument":{"type":"card/network+masked","cardBin":"444433","lastFour":"1111","tokenNumber":"444433******1111","cardBrand":"visa","expiryDate":{"month":2,"year":2028},"paymentAccountReference":"PAR"},"_links":{"cardPayments:settle":{"href":"https://issuer.example/payments/settlements/full/L"},"cardPayments:cancel":{"href":"https://issuer.example/payments/authorizations/cancellations/L"}}}"#), to: request)
        guard case .payment(let result) = authorized else {
            Issue.record("expected a payment, got \(authorized)")
            return
        }
        #expect(result.outcome == "authorized")
        #expect(result.paymentInstrument?.lastFour == "1111" && result.paymentInstrument?.expiryYear == 2028)
        #expect(result.links?.settle?.revealed == "https://issuer.example/payments/settlements/full/L")
        #expect(outcome(authorized, .worldpay, request).status == .authorized)
        let refused = adapter.answer(for: Requests.response(201, #"{"outcome":"refused","refusalCode":"5","refusalDescription":"Refused","paymentInstrument":{"type":"card/network+masked"}}"#), to: request)
        let refusedOutcome = outcome(refused, .worldpay, request)
        #expect(refusedOutcome.status == .refused && refusedOutcome.code == .paymentRefused && refusedOutcome.issuerCode == "5")
        let bad = adapter.answer(for: Requests.response(400, #"{"errorName":"bodyDoesNotMatchSchema","message":"x"}"#), to: request)
        #expect(bad == .issuerError(httpStatus: 400, issuerCode: "bodyDoesNotMatchSchema", message: Sensitive("x")))
        let noOutcome = adapter.answer(for: Requests.response(201, "{}"), to: request)
        #expect(outcome(noOutcome, .worldpay, request).status == .indeterminate, "an unreadable payment success is reconciled, not retried")
    }

    @Test func imprintReconciliationWindowAndDevice() {
        let adapter = ImprintAdapter(endpoint: Requests.endpoint(.imprint))
        let start = RFC3339.parse("2026-11-29T10:00:00.000Z") ?? 0
        let query = ReconcileQuery(requestID: "r", kind: .provision, wallet: .googleWallet, cardID: Sensitive("pm"),
                                   deviceRef: "ABCDEF", windowStartMs: start)
        func answer(_ tokens: String) -> ReconcileAnswer {
            adapter.reconcileAnswer(for: Requests.response(200, #"{"data":[\#(tokens)]}"#), to: query)
        }
        #expect(answer("") == .notApplied)
        #expect(answer(#"{"id":"t","wallet":"google_wallet","device_ref":"abcdef","status":"active","created_at":"2026-11-29T09:59:55.000Z"}"#)
            != .notApplied, "5 s of skew allowed")
        guard case .alreadyPresent = answer(#"{"id":"t","wallet":"google_wallet","device_ref":"abcdef","status":"active","created_at":"2026-11-29T09:59:54.999Z"}"#) else {
            Issue.record("an older token is an earlier attempt's: the card is already in that wallet on that device")
            return
        }
        #expect(answer(#"{"id":"t","wallet":"google_pay","device_ref":"abcdef","status":"active","created_at":"2026-11-29T10:00:01.000Z"}"#)
            == .notApplied, "another wallet")
        #expect(answer(#"{"id":"t","wallet":"google_wallet","device_ref":"012345","status":"active","created_at":"2026-11-29T10:00:01.000Z"}"#)
            == .notApplied, "another device")
        #expect(adapter.reconcileAnswer(for: Requests.response(404, #"{"error":{"code":"payment_method_not_found","message":"x"}}"#), to: query)
            == .notApplied)
        guard case .unknown = adapter.reconcileAnswer(for: Requests.response(503, ""), to: query) else {
            Issue.record("a failed query is unknown")
            return
        }
        guard case .unknown = adapter.reconcileAnswer(for: Requests.response(404, "not found"), to: query) else {
            Issue.record("a 404 without Imprint's code says nothing about the card")
            return
        }
    }

    /// With `handshake_ref`, a token is this call's only when it names this call's handshake; any
    /// other token for the wallet and device is an earlier call's (`already_provisioned`), however
    /// close to the window it was made. Legacy Google Pay's reference recurs: a token with it made
    /// since the window's start (less the skew) may be this call's or another attempt's.
    @Test func imprintReconciliationByHandshakeReference() {
        let adapter = ImprintAdapter(endpoint: Requests.endpoint(.imprint))
        let start = RFC3339.parse("2026-11-29T10:00:00.000Z") ?? 0
        let ours = String(repeating: "a", count: 64), theirs = String(repeating: "b", count: 64)
        var query = ReconcileQuery(requestID: "r", kind: .provision, wallet: .googleWallet, cardID: Sensitive("pm"),
                                   deviceRef: "abcdef", windowStartMs: start, handshakeRef: ours)
        func answer(_ tokens: String) -> ReconcileAnswer {
            adapter.reconcileAnswer(for: Requests.response(200, #"{"data":[\#(tokens)]}"#), to: query)
        }
        func token(_ reference: String, _ created: String, wallet: String = "google_wallet") -> String {
            #"{"id":"t","wallet":"\#(wallet)","device_ref":"abcdef","status":"active","created_at":"\#(created)","handshake_ref":"\#(reference)"}"#
        }
        func isAlreadyPresent(_ answer: ReconcileAnswer) -> Bool {
            if case .alreadyPresent = answer { return true }
            return false
        }
        #expect(isAlreadyPresent(answer(token(theirs, "2026-11-29T09:59:58.000Z"))),
                "another call's token 2 s before the window (within the skew allowance) is not ours")
        #expect(isAlreadyPresent(answer(token(theirs, "2026-11-29T10:00:03.000Z"))), "another call's token made during the window")
        #expect(answer(token(theirs, "2026-11-29T10:00:03.000Z") + "," + token(ours, "2026-11-29T10:00:04.000Z")) != .notApplied)
        guard case .applied = answer(token(theirs, "2026-11-29T09:00:00.000Z") + "," + token(ours, "2026-11-29T10:00:04.000Z")) else {
            Issue.record("our own token wins over an earlier one")
            return
        }
        #expect(answer(token(theirs, "2026-11-29T10:00:03.000Z", wallet: "google_pay")) == .notApplied, "another wallet's token")
        query.wallet = .googlePay
        #expect(isAlreadyPresent(answer(token(ours, "2026-11-29T09:00:00.000Z", wallet: "google_pay"))),
                "Legacy Google Pay: the same stable ids an hour before the window are an earlier attempt")
        guard case .notAttributable = answer(token(ours, "2026-11-29T10:00:01.000Z", wallet: "google_pay")) else {
            Issue.record("Legacy Google Pay: the same reference within the window may be another attempt's")
            return
        }
    }
}
