/// An amount in minor units of a currency (`{"currency":"GBP","value":250}` is £2.50).
public struct PaymentAmount: Sendable, Hashable {
    /// ISO 4217 alphabetic code, three uppercase letters.
    public var currency: String
    /// The amount in minor units.
    public var value: Int64

    /// Creates an amount.
    public init(currency: String, value: Int64) {
        self.currency = currency
        self.value = value
    }
}
