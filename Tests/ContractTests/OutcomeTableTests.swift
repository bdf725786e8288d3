import Contract
import Testing

@Suite("Outcome table", .timeLimit(.minutes(5)))
struct OutcomeTableTests {
    private func outcome(_ answer: IssuerAnswer, _ issuer: IssuerKind, _ wallet: Wallet = .applePay,
                         _ kind: RequestKind = .provision) -> Outcome {
        OutcomeTable.outcome(for: answer, issuer: issuer, wallet: wallet, kind: kind)
    }

    private func error(_ status: Int, _ code: String? = nil) -> IssuerAnswer {
        .issuerError(httpStatus: status, issuerCode: code, message: Sensitive("issuer text"))
    }

    static let applePayload = ProvisioningPayload.apple(activationData: Sensitive("YQ=="), encryptedPassData: Sensitive("Yg=="),
                                                        ephemeralPublicKey: Sensitive("Yw=="))

    /// An answer that falls under a row's pattern.
    private func representative(_ pattern: AnswerPattern) -> IssuerAnswer {
        switch pattern {
        case .success: .success(Self.applePayload)
        case .payment(let outcome): .payment(PaymentResult(outcome: outcome ?? "somethingNew"))
        case .http(let status, let code): error(status, code ?? "some_other_code")
        case .issuerCode(let code): error(200, code)
        case .httpClass(let hundred): error(hundred * 100 + 18)
        case .anyIssuerError: error(200, "UNHEARD_OF")
        case .transport(let failure): .transportFailure(failure)
        case .invalidSuccessResponse: .invalidSuccessResponse(reason: "missing field")
        case .anything: .payment(PaymentResult(outcome: "authorized"))
        }
    }

    @Test func everyRowIsReachable() {
        for (index, row) in OutcomeTable.rows.enumerated() {
            let kind = row.kind ?? .provision
            let issuer = row.issuer ?? (kind == .provision ? .imprint : .worldpay)
            let wallet = row.wallet ?? .applePay
            let found = OutcomeTable.row(for: representative(row.answer), issuer: issuer, wallet: wallet, kind: kind)
            #expect(found == row, "row \(index) (\(row.issuer?.rawValue ?? "any") \(row.answer)) is shadowed")
        }
    }

    @Test func rowsAreConsistent() {
        for row in OutcomeTable.rows {
            #expect(!row.message.isEmpty)
            if !row.isFinal { #expect(row.status == .indeterminate) }
            if row.status == .indeterminate { #expect(!row.isFinal) }
            if [.provisioned, .alreadyProvisioned, .authorized, .settled, .cancelled].contains(row.status) {
                #expect(row.code == nil)
                #expect(row.retry == .never)
            } else {
                #expect(row.code != nil)
            }
            if row.retry == .ifNotSent {
                #expect([.rateLimited, .issuerUnavailable].contains(row.code))
                #expect(row.status == .failed)
            }
        }
        #expect(OutcomeTable.rows.last?.answer == .anything)
        #expect(OutcomeTable.markdown().split(separator: "\n").count == OutcomeTable.rows.count + 2)
    }

    @Test func appleNeverRetriesAfterTheNonceMayHaveBeenUsed() {
        for row in OutcomeTable.rows where row.wallet == .applePay || (row.wallet == nil && row.kind != .payment && row.kind != .paymentAction) {
            #expect(row.retry != .sameHandshakeAllowed)
        }
        #expect(outcome(error(504), .imprint).retry == .never)
        #expect(outcome(.transportFailure(.timedOutAfterSend), .imprint).retry == .never)
        #expect(outcome(.transportFailure(.connectionLostAfterSend), .gnosis).retry == .never)
        #expect(outcome(.transportFailure(.notSent), .imprint).retry == .ifNotSent)
    }

    @Test func timeoutsAfterSendingAreIndeterminateWithWalletSpecificNextActions() {
        for answer in [error(504), IssuerAnswer.transportFailure(.timedOutAfterSend)] {
            let apple = outcome(answer, .imprint, .applePay)
            #expect(apple.status == .indeterminate)
            #expect(apple.code == .issuerTimeout)
            #expect(!apple.isFinal)
            #expect(apple.nextAction == .restartWalletFlow)
            let upp = outcome(answer, .imprint, .googleWallet)
            #expect(upp.nextAction == .restartWalletFlow)
            #expect(upp.retry == .never)
            let legacy = outcome(answer, .imprint, .googlePay)
            #expect(legacy.nextAction == .retry)
            #expect(legacy.retry == .sameHandshakeAllowed)
            #expect(!legacy.isFinal)
        }
    }

    @Test func notProcessedAnswersAreFailedAndRetryable() {
        let unavailable = outcome(error(503, "service_unavailable"), .imprint)
        #expect(unavailable.status == .failed)
        #expect(unavailable.code == .issuerUnavailable)
        #expect(unavailable.retry == .ifNotSent)
        #expect(unavailable.isFinal)
        #expect(outcome(error(429, "rate_limited"), .imprint).code == .rateLimited)
        #expect(outcome(error(429, "rate_limited"), .imprint).retry == .ifNotSent)
        let notSent = outcome(.transportFailure(.notSent), .dcs, .googlePay)
        #expect(notSent.status == .failed)
        #expect(notSent.code == .issuerUnavailable)
        #expect(notSent.nextAction == .retry)
    }

    @Test func abandonedBeforeSendIsExpired() {
        let expired = outcome(.transportFailure(.abandonedBeforeSend), .imprint)
        #expect(expired.status == .expired)
        #expect(expired.code == .deadlineExceeded)
        #expect(expired.isFinal)
        #expect(expired.retry == .never)
        #expect(OutcomeTable.expiredBeforeCall(wallet: .googlePay, kind: .provision).nextAction == .retry)
        #expect(OutcomeTable.expiredBeforeCall(wallet: .applePay, kind: .provision).code == .deadlineExceeded)
    }

    @Test func imprintErrors() {
        let expectations: [(Int, String?, ResultStatus, ErrorCode?, NextAction)] = [
            (400, "invalid_request", .rejected, .invalidRequest, .surfaceError),
            (400, "wallet_unsupported", .rejected, .walletUnsupported, .surfaceError),
            (401, "unauthenticated", .rejected, .unauthenticated, .surfaceError),
            (403, "permission_denied", .rejected, .permissionDenied, .surfaceError),
            (404, "payment_method_not_found", .rejected, .cardNotFound, .surfaceError),
            (409, "already_provisioned", .alreadyProvisioned, nil, .none),
            (422, "device_ineligible", .rejected, .deviceIneligible, .surfaceError),
            (422, "payment_method_not_active", .rejected, .cardNotActive, .surfaceError),
            (429, "rate_limited", .failed, .rateLimited, .restartWalletFlow),
            (503, "service_unavailable", .failed, .issuerUnavailable, .restartWalletFlow),
            (504, nil, .indeterminate, .issuerTimeout, .restartWalletFlow),
        ]
        for (status, code, expectedStatus, expectedCode, next) in expectations {
            let result = outcome(error(status, code), .imprint)
            #expect(result.status == expectedStatus, "\(status) \(code ?? "")")
            #expect(result.code == expectedCode, "\(status) \(code ?? "")")
            #expect(result.nextAction == next, "\(status) \(code ?? "")")
            #expect(result.issuerCode == code)
            #expect(result.httpStatus == status)
        }
        let conflict = outcome(error(409, "already_provisioned"), .imprint)
        #expect(conflict.isFinal)
    }

    @Test func dcsCodes() {
        let expectations: [(Int, String, ResultStatus, ErrorCode?)] = [
            (200, "PARAM_ERROR", .rejected, .invalidRequest),
            (401, "AUTH_FAILED", .rejected, .unauthenticated),
            (401, "SIGN_INVALID", .rejected, .unauthenticated),
            (401, "TIMESTAMP_EXPIRED", .rejected, .unauthenticated),
            (200, "CARD_NOT_FOUND", .rejected, .cardNotFound),
            (200, "CARD_STATUS_INVALID", .rejected, .cardNotActive),
            (200, "WALLET_ALREADY_BOUND", .alreadyProvisioned, nil),
            (200, "DEVICE_NOT_ELIGIBLE", .rejected, .deviceIneligible),
            (200, "NONCE_USED", .rejected, .invalidRequest),
            (429, "SYS_BUSY", .failed, .rateLimited),
            (200, "SYS_ERROR", .failed, .upstreamError),
        ]
        for (status, code, expectedStatus, expectedCode) in expectations {
            for wallet in Wallet.allCases {
                let result = outcome(error(status, code), .dcs, wallet)
                #expect(result.status == expectedStatus, "\(code)")
                #expect(result.code == expectedCode, "\(code)")
                #expect(result.issuerCode == code)
            }
        }
        #expect(outcome(error(429, "SYS_BUSY"), .dcs, .googlePay).retry == .ifNotSent)
        #expect(outcome(error(200, "SYS_ERROR"), .dcs, .applePay).nextAction == .restartWalletFlow)
        #expect(outcome(error(200, "NONCE_USED"), .dcs, .applePay).nextAction == .restartWalletFlow)
        #expect(outcome(error(200, "SOMETHING_NEW"), .dcs).status == .rejected)
        #expect(outcome(error(504), .dcs).status == .indeterminate)
    }

    @Test func gnosisErrors() {
        let expectations: [(Int, String, ResultStatus, ErrorCode?)] = [
            (400, "invalid_request", .rejected, .invalidRequest),
            (401, "unauthorized", .rejected, .unauthenticated),
            (403, "forbidden", .rejected, .permissionDenied),
            (404, "card_not_found", .rejected, .cardNotFound),
            (409, "already_provisioned", .alreadyProvisioned, nil),
            (422, "card_not_active", .rejected, .cardNotActive),
            (422, "device_ineligible", .rejected, .deviceIneligible),
            (429, "rate_limited", .failed, .rateLimited),
            (503, "unavailable", .failed, .issuerUnavailable),
        ]
        for (status, code, expectedStatus, expectedCode) in expectations {
            let result = outcome(error(status, code), .gnosis)
            #expect(result.status == expectedStatus, "\(status) \(code)")
            #expect(result.code == expectedCode, "\(status) \(code)")
        }
        #expect(outcome(error(504), .gnosis).status == .indeterminate)
    }

    @Test func worldpayOutcomes() {
        let authorized = outcome(.payment(PaymentResult(outcome: "authorized")), .worldpay, .applePay, .payment)
        #expect(authorized.status == .authorized)
        #expect(authorized.isFinal)
        #expect(authorized.nextAction == NextAction.none)
        let refused = outcome(.payment(PaymentResult(outcome: "refused", refusalCode: "5", refusalDescription: "REFUSED")),
                              .worldpay, .applePay, .payment)
        #expect(refused.status == .refused)
        #expect(refused.code == .paymentRefused)
        #expect(refused.issuerCode == "5")
        #expect(outcome(error(400, "bodyDoesNotMatchSchema"), .worldpay, .applePay, .payment).code == .invalidRequest)
        #expect(outcome(error(401), .worldpay, .applePay, .payment).code == .unauthenticated)
        let timeout = outcome(error(504), .worldpay, .applePay, .payment)
        #expect(timeout.status == .indeterminate)
        #expect(timeout.retry == .never)
        #expect(timeout.nextAction == NextAction.none)
        #expect(outcome(.transportFailure(.timedOutAfterSend), .worldpay, .applePay, .payment).retry == .never)
        #expect(outcome(.transportFailure(.notSent), .worldpay, .applePay, .payment).nextAction == .retry)
        #expect(outcome(.payment(PaymentResult(outcome: "sentForSettlement")), .worldpay, .applePay, .paymentAction).status == .settled)
        #expect(outcome(.payment(PaymentResult(outcome: "sentForCancellation")), .worldpay, .applePay, .paymentAction).status
            == .cancelled)
        #expect(outcome(.invalidSuccessResponse(reason: "no links"), .worldpay, .applePay, .payment).status == .indeterminate)
        #expect(outcome(.payment(PaymentResult(outcome: "mystery")), .worldpay, .applePay, .payment).isFinal == false)
    }

    @Test func successesAndUnusableSuccesses() {
        let success = outcome(.success(Self.applePayload), .imprint)
        #expect(success.status == .provisioned)
        #expect(success.nextAction == .addToWallet)
        #expect(success.code == nil)
        let invalid = outcome(.invalidSuccessResponse(reason: "missing google_provisioning_payload"), .imprint, .googleWallet)
        #expect(invalid.status == .failed)
        #expect(invalid.code == .upstreamError)
        #expect(invalid.retry == .never)
    }

    @Test func rejectionsBeforeTheCall() {
        #expect(OutcomeTable.rejection(code: .nonceReused, message: "m").nextAction == .restartWalletFlow)
        let invalid = OutcomeTable.rejection(code: .invalidRequest, message: "card.id is required")
        #expect(invalid.status == .rejected)
        #expect(invalid.nextAction == .surfaceError)
        #expect(invalid.isFinal)
    }
}
