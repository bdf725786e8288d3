/// Worldpay action links of an authorized payment. Each link is a capability, so it is `Sensitive`:
/// it reaches the requesting backend in the result and nothing else (no logs, no audit).
public struct PaymentLinks: Sendable, Hashable {
    /// `cardPayments:settle`.
    public var settle: Sensitive?
    /// `cardPayments:partialSettle`.
    public var partialSettle: Sensitive?
    /// `cardPayments:cancel`.
    public var cancel: Sensitive?
    /// `cardPayments:events`.
    public var events: Sensitive?

    /// Creates links.
    public init(settle: Sensitive? = nil, partialSettle: Sensitive? = nil, cancel: Sensitive? = nil, events: Sensitive? = nil) {
        self.settle = settle
        self.partialSettle = partialSettle
        self.cancel = cancel
        self.events = events
    }

    /// Whether no link is present.
    public var isEmpty: Bool { settle == nil && partialSettle == nil && cancel == nil && events == nil }

    /// Reads Worldpay's `_links` object (`{"cardPayments:settle":{"href":…},…}`).
    public init(worldpayLinks: JSONValue?) {
        func href(_ name: String) -> Sensitive? {
            worldpayLinks?[name]?["href"]?.stringValue.map(Sensitive.init)
        }
        self.init(settle: href("cardPayments:settle"), partialSettle: href("cardPayments:partialSettle"),
                  cancel: href("cardPayments:cancel"), events: href("cardPayments:events"))
    }
}
