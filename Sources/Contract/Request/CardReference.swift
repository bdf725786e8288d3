/// The card a request is about (`card` in the request).
public struct CardReference: Sendable, Hashable {
    /// The issuer's card identifier (Imprint `payment_method_id`, DCS `cardId`, Gnosis card id);
    /// for payments, the backend's own card reference used as the Kafka key.
    public var id: Sensitive
    /// The last four digits (DCS `cardMantissa`).
    public var last4: CardLast4?
    /// The issuer's user identifier (DCS `externalUserId`, required for DCS).
    public var userID: Sensitive?

    /// Creates a card reference.
    public init(id: Sensitive, last4: CardLast4? = nil, userID: Sensitive? = nil) {
        self.id = id
        self.last4 = last4
        self.userID = userID
    }
}
