/// Computes request windows and admits or expires requests (CONTRACT sections 3 and 9).
public struct DeadlinePolicy: Sendable, Hashable {
    /// Apple Pay window: PassKit's completion handler must be called within 20 s.
    public var applePayWindowMs: Int64
    /// Google Wallet UPP and Legacy Google Pay window (configurable, default 60 s).
    public var googleWindowMs: Int64
    /// Payment and payment-action window (our choice, default 30 s).
    public var paymentWindowMs: Int64
    /// Time reserved between publishing the result and the deadline (default 1 s).
    public var replyMarginMs: Int64
    /// Least time an issuer call needs; with less left the request expires uncalled (default 500 ms).
    public var minimumIssuerBudgetMs: Int64

    /// Creates a policy; the defaults are the contract's.
    public init(applePayWindowMs: Int64 = 20_000, googleWindowMs: Int64 = 60_000, paymentWindowMs: Int64 = 30_000,
                replyMarginMs: Int64 = 1_000, minimumIssuerBudgetMs: Int64 = 500) {
        self.applePayWindowMs = applePayWindowMs
        self.googleWindowMs = googleWindowMs
        self.paymentWindowMs = paymentWindowMs
        self.replyMarginMs = replyMarginMs
        self.minimumIssuerBudgetMs = minimumIssuerBudgetMs
    }

    /// The window length for a kind of request and wallet.
    public func windowLengthMs(kind: RequestKind, wallet: Wallet) -> Int64 {
        switch (kind, wallet) {
        case (.provision, .applePay): applePayWindowMs
        case (.provision, .googleWallet), (.provision, .googlePay): googleWindowMs
        case (.payment, _), (.paymentAction, _): paymentWindowMs
        }
    }

    /// The window of a request.
    ///
    /// Start is `started_at`, else `recordTimestampMs`, else `receivedAtMs`; a start later than the
    /// record timestamp or the receipt (a clock ahead of ours) is pulled back to the earliest of them,
    /// so a skewed clock can shorten a window but never stretch it past the wallet's limit.
    public func window(kind: RequestKind, wallet: Wallet, startedAtMs: Int64?, deadlineMs: Int64?,
                       recordTimestampMs: Int64?, receivedAtMs: Int64) -> RequestWindow {
        var start = startedAtMs ?? recordTimestampMs ?? receivedAtMs
        if let recordTimestampMs { start = min(start, recordTimestampMs) }
        start = min(start, receivedAtMs)
        // Saturating: a record timestamp is producer-set and may be anything (Int64.min included).
        var deadline = start.clampedAdding(windowLengthMs(kind: kind, wallet: wallet))
        if let deadlineMs { deadline = min(deadline, deadlineMs) }
        return RequestWindow(startMs: start, deadlineMs: deadline, publishByMs: deadline.clampedSubtracting(replyMarginMs))
    }

    /// The window of a decoded request.
    public func window(for request: ProvisioningRequest, recordTimestampMs: Int64?, receivedAtMs: Int64) -> RequestWindow {
        window(kind: request.kind, wallet: request.wallet, startedAtMs: request.startedAtMs, deadlineMs: request.deadlineMs,
               recordTimestampMs: recordTimestampMs, receivedAtMs: receivedAtMs)
    }

    /// Admits the request when at least the minimum issuer budget is left before `publishByMs`:
    /// expired when `now ≥ publishBy − minimumIssuerBudget`.
    public func admit(_ window: RequestWindow, nowMs: Int64, minimumIssuerBudgetMs: Int64? = nil) -> Admission {
        let minimum = minimumIssuerBudgetMs ?? self.minimumIssuerBudgetMs
        if nowMs >= window.publishByMs.clampedSubtracting(minimum) { return .expired }
        return .admit(budgetMs: window.publishByMs.clampedSubtracting(nowMs))
    }
}
