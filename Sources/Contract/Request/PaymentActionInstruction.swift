/// A follow-up on an authorized Worldpay payment (`payment_action` in a `kind: payment_action` request).
public struct PaymentActionInstruction: Sendable, Hashable {
    /// Settle, partially settle or cancel.
    public var action: PaymentActionKind
    /// The matching `href` from the links sealed in the authorization's payload.
    public var link: Sensitive
    /// The amount to settle; required for `partial_settle`, absent otherwise.
    public var amount: PaymentAmount?
    /// The authorized payment's transaction reference.
    public var transactionReference: String

    /// Creates a payment action.
    public init(action: PaymentActionKind, link: Sensitive, amount: PaymentAmount? = nil, transactionReference: String) {
        self.action = action
        self.link = link
        self.amount = amount
        self.transactionReference = transactionReference
    }
}
