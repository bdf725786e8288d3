/// Worldpay action links of an authorized payment. Each link is a capability (whoever holds it and
/// a program's key can settle or cancel the payment), so it is `Sensitive` and travels only as the
/// plaintext of the result's `payload`, a JWE to the requester's `reply.jwk`: never in clear in a
/// result, a marker, a log or an audit event.
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

    /// The link tokens (each link's last path segment): all the links of one payment name it by
    /// the same token, so a link belongs to a payment when its token is among these.
    public var tokens: Set<String> {
        Set([settle, partialSettle, cancel, events].compactMap { $0.flatMap { Self.token(of: $0.revealed) } })
    }

    /// The last path segment of `link` (nil when empty): the part of a Worldpay link naming its payment.
    public static func token(of link: String) -> String? {
        guard let last = link.split(separator: "/", omittingEmptySubsequences: false).last, !last.isEmpty else { return nil }
        return String(last)
    }

    /// The JWE plaintext of a payment result's `payload`: `{"links": {"settle", "partial_settle",
    /// "cancel", "events"}}`, each an href or null.
    public func plaintextJSON() -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.beginObject()
        writer.key("links")
        writer.beginObject()
        writer.key("settle"); writer.string(orNull: settle?.revealed)
        writer.key("partial_settle"); writer.string(orNull: partialSettle?.revealed)
        writer.key("cancel"); writer.string(orNull: cancel?.revealed)
        writer.key("events"); writer.string(orNull: events?.revealed)
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    /// Reads a plaintext produced by `plaintextJSON()` (after `JWE.decrypt`).
    public static func decode(plaintext: [UInt8]) throws(ContractDecodingError) -> PaymentLinks {
        guard let document = try? JSONParser().parse(plaintext), case .object(let members)? = document["links"] else {
            throw ContractDecodingError(field: "links", message: "the payload is not a JSON object with a links object")
        }
        func href(_ name: String) -> Sensitive? { members[name]?.stringValue.map(Sensitive.init) }
        return PaymentLinks(settle: href("settle"), partialSettle: href("partial_settle"), cancel: href("cancel"), events: href("events"))
    }
}
