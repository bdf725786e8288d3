/// An Apple Pay payment to authorize through Worldpay (`payment` in a `kind: payment` request).
public struct PaymentInstruction: Sendable, Hashable {
    /// The merchant's unique reference; also the key for reconciliation queries.
    public var transactionReference: String
    /// The amount to authorize.
    public var amount: PaymentAmount
    /// The Apple Pay `paymentData` JSON, as a string, passed to Worldpay unchanged.
    public var walletToken: Sensitive
    /// Statement narrative (Worldpay `narrative.line1`).
    public var narrative: String
    /// Whether Worldpay settles automatically after authorization.
    public var autoSettle: Bool
    /// The repeat-payment agreement, when this payment sets one up.
    public var customerAgreement: CustomerAgreement?

    /// Creates a payment instruction.
    public init(transactionReference: String, amount: PaymentAmount, walletToken: Sensitive, narrative: String,
                autoSettle: Bool = false, customerAgreement: CustomerAgreement? = nil) {
        self.transactionReference = transactionReference
        self.amount = amount
        self.walletToken = walletToken
        self.narrative = narrative
        self.autoSettle = autoSettle
        self.customerAgreement = customerAgreement
    }
}
