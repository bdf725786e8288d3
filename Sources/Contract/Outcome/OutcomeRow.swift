/// One row of `OutcomeTable`: which answers, for which issuer, kind and wallet, mean what.
public struct OutcomeRow: Sendable, Hashable {
    /// The issuer, or `nil` for every issuer.
    public var issuer: IssuerKind?
    /// The request kind, or `nil` for every kind.
    public var kind: RequestKind?
    /// The wallet, or `nil` for every wallet.
    public var wallet: Wallet?
    /// The answers covered.
    public var answer: AnswerPattern
    /// Result status.
    public var status: ResultStatus
    /// Normalized code.
    public var code: ErrorCode?
    /// Next action for the app.
    public var nextAction: NextAction
    /// Whether the result is final.
    public var isFinal: Bool
    /// Whether the call may be repeated.
    public var retry: RetryRule
    /// Our explanation, used as the result message.
    public var message: String

    /// Creates a row.
    public init(issuer: IssuerKind?, kind: RequestKind?, wallet: Wallet?, answer: AnswerPattern, status: ResultStatus,
                code: ErrorCode?, nextAction: NextAction, isFinal: Bool, retry: RetryRule, message: String) {
        self.issuer = issuer
        self.kind = kind
        self.wallet = wallet
        self.answer = answer
        self.status = status
        self.code = code
        self.nextAction = nextAction
        self.isFinal = isFinal
        self.retry = retry
        self.message = message
    }

    /// Whether the row applies.
    public func matches(_ answer: IssuerAnswer, issuer: IssuerKind, wallet: Wallet, kind: RequestKind) -> Bool {
        (self.issuer == nil || self.issuer == issuer) && (self.kind == nil || self.kind == kind)
            && (self.wallet == nil || self.wallet == wallet) && self.answer.matches(answer)
    }
}
