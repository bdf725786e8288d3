/// The masked card details Worldpay returns, reduced to what a backend may show.
///
/// The payment account reference and the token number are dropped on purpose.
public struct MaskedPaymentInstrument: Sendable, Hashable {
    /// e.g. `card/network+masked`.
    public var type: String?
    /// e.g. `visa`.
    public var cardBrand: String?
    /// The BIN (may contain `*`).
    public var cardBin: String?
    /// The last four digits (may contain `*`).
    public var lastFour: String?
    /// Token expiry month.
    public var expiryMonth: Int?
    /// Token expiry year.
    public var expiryYear: Int?
    /// e.g. `debit`.
    public var fundingType: String?
    /// e.g. `consumer`.
    public var category: String?
    /// ISO 3166 alpha-2, or `N/A`.
    public var countryCode: String?
    /// The issuing bank's name.
    public var issuerName: String?

    /// Creates masked details.
    public init(type: String? = nil, cardBrand: String? = nil, cardBin: String? = nil, lastFour: String? = nil,
                expiryMonth: Int? = nil, expiryYear: Int? = nil, fundingType: String? = nil, category: String? = nil,
                countryCode: String? = nil, issuerName: String? = nil) {
        self.type = type
        self.cardBrand = cardBrand
        self.cardBin = cardBin
        self.lastFour = lastFour
        self.expiryMonth = expiryMonth
        self.expiryYear = expiryYear
        self.fundingType = fundingType
        self.category = category
        self.countryCode = countryCode
        self.issuerName = issuerName
    }

    /// Reads Worldpay's `paymentInstrument` object, keeping only the fields above.
    public init(worldpay instrument: JSONValue) {
        self.init(type: instrument["type"]?.stringValue, cardBrand: instrument["cardBrand"]?.stringValue,
                  cardBin: instrument["cardBin"]?.stringValue, lastFour: instrument["lastFour"]?.stringValue,
                  expiryMonth: instrument["expiryDate"]?["month"]?.int64Value.map { Int($0) },
                  expiryYear: instrument["expiryDate"]?["year"]?.int64Value.map { Int($0) },
                  fundingType: instrument["fundingType"]?.stringValue, category: instrument["category"]?.stringValue,
                  countryCode: instrument["countryCode"]?.stringValue, issuerName: instrument["issuerName"]?.stringValue)
    }
}
