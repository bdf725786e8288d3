/// A Worldpay customer agreement for repeat payments (`customer_agreement` in a payment).
public struct CustomerAgreement: Sendable, Hashable {
    /// Agreement type: `cardOnFile`, `subscription`, `installment` or `unscheduled`.
    public var agreementType: String
    /// `first` or `subsequent`.
    public var storedCardUsage: String

    /// Creates an agreement.
    public init(agreementType: String, storedCardUsage: String) {
        self.agreementType = agreementType
        self.storedCardUsage = storedCardUsage
    }
}
