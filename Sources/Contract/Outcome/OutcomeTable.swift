/// The one mapping from issuer answers to result status, code, next action, finality and retry
/// (CONTRACT section 4, ARCHITECTURE "Issuer wire formats"). `rows` is data: the README prints it
/// and tests walk it. The first matching row wins; the last row matches anything.
public enum OutcomeTable {
    /// Every row, in matching order.
    public static let rows: [OutcomeRow] = buildRows()

    /// The outcome of `answer` for a request of `kind` to `wallet` at `issuer`.
    public static func outcome(for answer: IssuerAnswer, issuer: IssuerKind, wallet: Wallet, kind: RequestKind) -> Outcome {
        let row = self.row(for: answer, issuer: issuer, wallet: wallet, kind: kind)
        var issuerCode: String?
        var httpStatus: Int?
        switch answer {
        case .issuerError(let status, let code, _):
            issuerCode = code
            httpStatus = status
        case .payment(let result):
            issuerCode = result.refusalCode
        default:
            break
        }
        return Outcome(status: row.status, code: row.code, nextAction: row.nextAction, isFinal: row.isFinal,
                       retry: row.retry, issuerCode: issuerCode, httpStatus: httpStatus, message: row.message)
    }

    /// The first row matching `answer`.
    public static func row(for answer: IssuerAnswer, issuer: IssuerKind, wallet: Wallet, kind: RequestKind) -> OutcomeRow {
        for row in rows where row.matches(answer, issuer: issuer, wallet: wallet, kind: kind) { return row }
        return rows[rows.count - 1]
    }

    /// The outcome of a request rejected before the issuer call (decode or validation).
    public static func rejection(code: ErrorCode, message: String) -> Outcome {
        Outcome(status: .rejected, code: code, nextAction: code == .nonceReused ? .restartWalletFlow : .surfaceError,
                isFinal: true, retry: .never, message: message)
    }

    /// The outcome of a request that expired before its issuer call.
    public static func expiredBeforeCall(wallet: Wallet, kind: RequestKind) -> Outcome {
        Outcome(status: .expired, code: .deadlineExceeded, nextAction: transientNextAction(kind: kind, wallet: wallet),
                isFinal: true, retry: .never, message: "the deadline left too little time to call the issuer; it was not called")
    }

    /// The issuer is failing (its circuit breaker is open): refused without a call.
    public static func breakerOpen() -> Outcome {
        Outcome(status: .failed, code: .issuerUnavailable, nextAction: .surfaceError, isFinal: true, retry: .never,
                message: "the issuer is failing (circuit breaker open); it was not called")
    }

    /// The program's rate limit toward the issuer had no room before the deadline: refused without a call.
    public static func rateLimitedBeforeCall(wallet: Wallet, kind: RequestKind) -> Outcome {
        Outcome(status: .failed, code: .rateLimited, nextAction: transientNextAction(kind: kind, wallet: wallet), isFinal: true,
                retry: .never, message: "the program's rate limit toward the issuer had no room before the deadline; it was not called")
    }

    /// The `started` marker could not be written: answered without a call (sending again is safe).
    public static func markerNotWritten(wallet: Wallet, kind: RequestKind) -> Outcome {
        Outcome(status: .failed, code: .upstreamError, nextAction: transientNextAction(kind: kind, wallet: wallet), isFinal: true,
                retry: .ifNotSent, message: "the worker could not record the call in Kafka; the issuer was not called")
    }

    /// Ownership of the request's partition could not be confirmed against the fences in time.
    public static func ownershipUnconfirmed(wallet: Wallet, kind: RequestKind) -> Outcome {
        var outcome = expiredBeforeCall(wallet: wallet, kind: kind)
        outcome.message = "the worker could not confirm it still owns the request's partition before the deadline; the issuer was not called"
        return outcome
    }

    /// The issuer's payload could not be encrypted to `reply.jwk`.
    public static func payloadNotSealed() -> Outcome {
        Outcome(status: .failed, code: .upstreamError, nextAction: .surfaceError, isFinal: true, retry: .never,
                message: "the provisioning payload could not be encrypted to reply.jwk")
    }

    /// A previous worker started the call and stopped before answering: reconciling with the issuer.
    public static func recoveringFromMarker(issuer: IssuerKind, wallet: Wallet, kind: RequestKind) -> Outcome {
        var outcome = outcome(for: .transportFailure(.timedOutAfterSend), issuer: issuer, wallet: wallet, kind: kind)
        outcome.message = "a previous worker started this issuer call and stopped before answering; reconciling with the issuer"
        return outcome
    }

    /// Reconciliation: the issuer applied the call.
    public static func reconciledApplied() -> Outcome {
        Outcome(status: .provisioned, code: nil, nextAction: .checkWallet, isFinal: true, retry: .never,
                message: "reconciled: the issuer applied the call; check the device wallet for the card")
    }

    /// Reconciliation: the call made no wallet token, and an earlier call's token holds the card in
    /// that wallet on that device (the call itself was, or would have been, refused as a repeat).
    public static func reconciledAlreadyProvisioned() -> Outcome {
        Outcome(status: .alreadyProvisioned, code: nil, nextAction: .none, isFinal: true, retry: .never,
                message: "reconciled: the card is already in this wallet on this device")
    }

    /// Reconciliation: the issuer did not apply the call (for payments: no payment has the reference).
    public static func reconciledNotApplied(wallet: Wallet, kind: RequestKind) -> Outcome {
        kind == .provision
            ? Outcome(status: .notProvisioned, code: .issuerTimeout, nextAction: transientNextAction(kind: kind, wallet: wallet),
                      isFinal: true, retry: .never, message: "reconciled: the issuer did not apply the call")
            : Outcome(status: .failed, code: .issuerTimeout, nextAction: .retry, isFinal: true, retry: .never,
                      message: "reconciled: no payment exists with this transaction reference")
    }

    /// Reconciliation from a payment's events: its final `status` (authorized, refused, settled, cancelled).
    public static func reconciledPayment(_ status: ResultStatus) -> Outcome {
        Outcome(status: status, code: status == .refused ? .paymentRefused : nil, nextAction: .none, isFinal: true, retry: .never,
                message: "reconciled from the payment's events: \(status.rawValue)")
    }

    /// Reconciliation cannot ask the issuer (no state query): the device wallet knows.
    public static func reconcileCheckWallet() -> Outcome {
        Outcome(status: .indeterminate, code: .issuerTimeout, nextAction: .checkWallet, isFinal: true, retry: .never,
                message: "the issuer offers no state query; ask the device wallet whether the card was added")
    }

    /// Reconciliation ran out of attempts without learning what the issuer did.
    public static func reconcileExhausted() -> Outcome {
        Outcome(status: .indeterminate, code: .issuerUnavailable, nextAction: .checkWallet, isFinal: true, retry: .never,
                message: "reconciliation could not learn what the issuer did; ask the device wallet")
    }

    /// What the app should do after a transient failure: Apple and Google UPP restart their flow
    /// (single-use handshakes), Legacy Google Pay and uncharged payments may retry.
    public static func transientNextAction(kind: RequestKind, wallet: Wallet) -> NextAction {
        switch (kind, wallet) {
        case (.provision, .applePay), (.provision, .googleWallet): .restartWalletFlow
        case (.provision, .googlePay), (.payment, _), (.paymentAction, _): .retry
        }
    }

    /// The table as Markdown, for the README.
    public static func markdown() -> String {
        var lines = ["| issuer | kind | wallet | answer | status | code | next_action | final | retry |",
                     "|---|---|---|---|---|---|---|---|---|"]
        for row in rows {
            let cells = [row.issuer?.rawValue ?? "any", row.kind?.rawValue ?? "any", row.wallet?.rawValue ?? "any",
                         row.answer.description, row.status.rawValue, row.code?.rawValue ?? "–", row.nextAction.rawValue,
                         row.isFinal ? "yes" : "no", row.retry.rawValue]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    // MARK: Building the rows

    private struct Context {
        var kind: RequestKind
        var wallet: Wallet?
        var isPayment: Bool { kind != .provision }
        /// Next action after a transient failure (`transientNextAction`; a payment has no wallet).
        var transient: NextAction { wallet.map { OutcomeTable.transientNextAction(kind: kind, wallet: $0) } ?? .retry }
        /// Retry rule once the issuer may have processed the request.
        var afterSend: RetryRule {
            kind == .provision && wallet == .googlePay ? .sameHandshakeAllowed : .never
        }
    }

    private static let provisioningContexts = [Context(kind: .provision, wallet: .applePay),
                                               Context(kind: .provision, wallet: .googleWallet),
                                               Context(kind: .provision, wallet: .googlePay)]
    private static let paymentContexts = [Context(kind: .payment, wallet: nil), Context(kind: .paymentAction, wallet: nil)]

    private static func buildRows() -> [OutcomeRow] {
        var rows: [OutcomeRow] = []
        func add(_ issuer: IssuerKind?, _ kind: RequestKind?, _ wallet: Wallet?, _ answer: AnswerPattern,
                 _ status: ResultStatus, _ code: ErrorCode?, _ next: NextAction, final: Bool = true,
                 retry: RetryRule = .never, _ message: String) {
            rows.append(OutcomeRow(issuer: issuer, kind: kind, wallet: wallet, answer: answer, status: status, code: code,
                                   nextAction: next, isFinal: final, retry: retry, message: message))
        }
        func rejected(_ issuer: IssuerKind, _ kind: RequestKind?, _ answer: AnswerPattern, _ code: ErrorCode,
                      _ message: String, next: NextAction = .surfaceError) {
            add(issuer, kind, nil, answer, .rejected, code, next, message)
        }

        // Successes.
        add(nil, .provision, nil, .success, .provisioned, nil, .addToWallet, "ok")
        add(.worldpay, .payment, nil, .payment(outcome: "authorized"), .authorized, nil, .none, "the payment was authorized")
        add(.worldpay, .payment, nil, .payment(outcome: "refused"), .refused, .paymentRefused, .surfaceError,
            "the payment was refused; see payment.refusal_code")
        for kind in [RequestKind.payment, .paymentAction] {
            add(.worldpay, kind, nil, .payment(outcome: "sentForSettlement"), .settled, nil, .none, "the payment was sent for settlement")
            add(.worldpay, kind, nil, .payment(outcome: "sentForPartialSettlement"), .settled, nil, .none,
                "part of the payment was sent for settlement")
            add(.worldpay, kind, nil, .payment(outcome: "partiallySettled"), .settled, nil, .none, "part of the payment was settled")
            add(.worldpay, kind, nil, .payment(outcome: "settled"), .settled, nil, .none, "the payment was settled")
            add(.worldpay, kind, nil, .payment(outcome: "sentForCancellation"), .cancelled, nil, .none, "the authorization was cancelled")
            add(.worldpay, kind, nil, .payment(outcome: "cancelled"), .cancelled, nil, .none, "the authorization was cancelled")
        }

        // Imprint.
        rejected(.imprint, .provision, .http(status: 400, issuerCode: "invalid_request"), .invalidRequest,
                 "Imprint rejected the request as invalid (a PassKit value, a missing field, or a used nonce)")
        rejected(.imprint, .provision, .http(status: 400, issuerCode: "wallet_unsupported"), .walletUnsupported,
                 "Imprint does not support this wallet for the program")
        rejected(.imprint, .provision, .http(status: 400, issuerCode: nil), .invalidRequest, "Imprint rejected the request as invalid")
        rejected(.imprint, .provision, .http(status: 401, issuerCode: nil), .unauthenticated,
                 "Imprint rejected our credentials; an operator must fix the program's API key")
        rejected(.imprint, .provision, .http(status: 403, issuerCode: nil), .permissionDenied,
                 "the API key lacks card write access; an operator must ask Imprint for it")
        rejected(.imprint, .provision, .http(status: 404, issuerCode: nil), .cardNotFound,
                 "the card does not exist or belongs to another program")
        add(.imprint, .provision, nil, .http(status: 409, issuerCode: nil), .alreadyProvisioned, nil, .none,
            "the card is already in this wallet on this device")
        rejected(.imprint, .provision, .http(status: 422, issuerCode: "device_ineligible"), .deviceIneligible,
                 "the device cannot take this card; retrying will not help")
        rejected(.imprint, .provision, .http(status: 422, issuerCode: "payment_method_not_active"), .cardNotActive,
                 "the card is not active (frozen or not activated)")

        // DCS (envelope codes arrive with HTTP 200, auth codes with 401, SYS_BUSY with 429).
        rejected(.dcs, .provision, .issuerCode("PARAM_ERROR"), .invalidRequest, "DCS rejected a parameter")
        for code in ["AUTH_FAILED", "SIGN_INVALID", "TIMESTAMP_EXPIRED"] {
            rejected(.dcs, .provision, .issuerCode(code), .unauthenticated,
                     "DCS rejected our signature or credentials; an operator must check the key, secret and clock")
        }
        rejected(.dcs, .provision, .issuerCode("CARD_NOT_FOUND"), .cardNotFound, "DCS does not know the card for this program")
        rejected(.dcs, .provision, .issuerCode("CARD_STATUS_INVALID"), .cardNotActive,
                 "the card is not in a usable state (activated, not frozen, not cancelled)")
        add(.dcs, .provision, nil, .issuerCode("WALLET_ALREADY_BOUND"), .alreadyProvisioned, nil, .none,
            "the card is already bound to this wallet")
        rejected(.dcs, .provision, .issuerCode("DEVICE_NOT_ELIGIBLE"), .deviceIneligible, "the device cannot take this card")
        rejected(.dcs, .provision, .issuerCode("NONCE_USED"), .invalidRequest,
                 "DCS saw this Apple nonce before; restart the PassKit flow for a fresh one", next: .restartWalletFlow)
        for context in provisioningContexts {
            add(.dcs, .provision, context.wallet, .issuerCode("SYS_BUSY"), .failed, .rateLimited, context.transient,
                retry: .ifNotSent, "DCS is busy and did not process the request")
            // Only a 200 envelope is DCS's own verdict; SYS_ERROR on a 503 is an outage (the generic 503 row).
            add(.dcs, .provision, context.wallet, .http(status: 200, issuerCode: "SYS_ERROR"), .failed, .upstreamError, context.transient,
                "DCS reported a system error")
        }
        rejected(.dcs, .provision, .http(status: 401, issuerCode: nil), .unauthenticated,
                 "DCS rejected our signature or credentials; an operator must check the key, secret and clock")

        // Gnosis Pay.
        rejected(.gnosis, .provision, .http(status: 400, issuerCode: nil), .invalidRequest, "Gnosis Pay rejected the request as invalid")
        rejected(.gnosis, .provision, .http(status: 401, issuerCode: nil), .unauthenticated,
                 "Gnosis Pay rejected our token; an operator must fix the program's credentials")
        rejected(.gnosis, .provision, .http(status: 403, issuerCode: nil), .permissionDenied, "Gnosis Pay refused the operation")
        rejected(.gnosis, .provision, .http(status: 404, issuerCode: nil), .cardNotFound,
                 "the card does not exist or belongs to another user or program")
        add(.gnosis, .provision, nil, .http(status: 409, issuerCode: nil), .alreadyProvisioned, nil, .none,
            "the card is already in this wallet")
        rejected(.gnosis, .provision, .http(status: 422, issuerCode: "card_not_active"), .cardNotActive, "the card is not active")
        rejected(.gnosis, .provision, .http(status: 422, issuerCode: "device_ineligible"), .deviceIneligible,
                 "the device cannot take this card")

        // Worldpay.
        // A reused transaction reference after a lost answer means the payment may already exist:
        // find out by reconciliation rather than reporting a rejection.
        add(.worldpay, .payment, nil, .http(status: 409, issuerCode: "duplicateTransactionReference"), .indeterminate, .upstreamError,
            .none, final: false, "Worldpay already has a payment with this transaction reference; reconciling to learn its state")
        rejected(.worldpay, nil, .http(status: 400, issuerCode: nil), .invalidRequest, "Worldpay rejected the request as invalid")
        rejected(.worldpay, nil, .http(status: 401, issuerCode: nil), .unauthenticated,
                 "Worldpay rejected our credentials; an operator must fix the program's key")
        rejected(.worldpay, nil, .http(status: 404, issuerCode: nil), .invalidRequest, "Worldpay does not know this payment or link")

        // Every issuer: throttling, outages, timeouts, transport, unusable answers.
        for context in provisioningContexts + paymentContexts {
            let kind = context.kind, wallet = context.wallet
            add(nil, kind, wallet, .http(status: 429, issuerCode: nil), .failed, .rateLimited, context.transient,
                retry: .ifNotSent, "the issuer is rate limiting and did not process the request")
            add(nil, kind, wallet, .http(status: 503, issuerCode: nil), .failed, .issuerUnavailable, context.transient,
                retry: .ifNotSent, "the issuer is unavailable and did not process the request")
            add(nil, kind, wallet, .http(status: 504, issuerCode: nil), .indeterminate, .issuerTimeout,
                context.isPayment ? .none : context.transient, final: false, retry: context.afterSend,
                "the issuer timed out upstream; it may have applied the request; reconciliation follows")
            add(nil, kind, wallet, .transport(.notSent), .failed, .issuerUnavailable, context.transient, retry: .ifNotSent,
                "the issuer could not be reached; the request was never sent")
            add(nil, kind, wallet, .transport(.timedOutAfterSend), .indeterminate, .issuerTimeout,
                context.isPayment ? .none : context.transient, final: false, retry: context.afterSend,
                "no answer in time after sending; it may have been applied; reconciliation follows")
            add(nil, kind, wallet, .transport(.connectionLostAfterSend), .indeterminate, .issuerUnavailable,
                context.isPayment ? .none : context.transient, final: false, retry: context.afterSend,
                "the connection broke after sending; it may have been applied; reconciliation follows")
            add(nil, kind, wallet, .transport(.abandonedBeforeSend), .expired, .deadlineExceeded, context.transient,
                "the deadline budget ran out before the request was sent; the issuer was not called")
            if context.isPayment {
                add(nil, kind, wallet, .invalidSuccessResponse, .indeterminate, .upstreamError, .none, final: false,
                    "the issuer's success answer was unusable; the payment state is checked by reconciliation")
                add(nil, kind, wallet, .payment(outcome: nil), .indeterminate, .upstreamError, .none, final: false,
                    "the issuer answered an unknown outcome; the payment state is checked by reconciliation")
                add(nil, kind, wallet, .httpClass(5), .indeterminate, .upstreamError, .none, final: false,
                    "the issuer failed; it may have applied the request; reconciliation follows")
            } else {
                add(nil, kind, wallet, .invalidSuccessResponse, .failed, .upstreamError, context.transient,
                    "the issuer's success answer was unusable (missing or oversized payload fields)")
                add(nil, kind, wallet, .httpClass(5), .indeterminate, .upstreamError, context.transient, final: false,
                    retry: context.afterSend, "the issuer failed; it may have applied the request; reconciliation follows")
            }
        }
        add(nil, nil, nil, .httpClass(4), .rejected, .upstreamError, .surfaceError, "the issuer refused the request")
        add(nil, nil, nil, .anyIssuerError, .rejected, .upstreamError, .surfaceError, "the issuer answered an unknown error")
        add(nil, nil, nil, .anything, .failed, .upstreamError, .surfaceError, "the issuer's answer does not fit the request")
        return rows
    }
}
