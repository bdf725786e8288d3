/// The payment part of a payment result (`payment` in the result).
public struct PaymentResult: Sendable, Hashable {
    /// Worldpay's outcome: `authorized`, `refused`, `sentForSettlement`, `sentForCancellation`, or
    /// an event name from a reconciliation query (`settled`, `cancelled`).
    public var outcome: String
    /// Worldpay's refusal code, when refused.
    public var refusalCode: String?
    /// Worldpay's refusal description, when refused.
    public var refusalDescription: String?
    /// Masked card details.
    public var paymentInstrument: MaskedPaymentInstrument?
    /// Action links for later settle, partial settle, cancel or event queries, as the issuer sent
    /// them: never encoded in the result (`ProvisioningResult`), only sealed in its `payload`.
    public var links: PaymentLinks?

    /// Creates a payment result.
    public init(outcome: String, refusalCode: String? = nil, refusalDescription: String? = nil,
                paymentInstrument: MaskedPaymentInstrument? = nil, links: PaymentLinks? = nil) {
        self.outcome = outcome
        self.refusalCode = refusalCode
        self.refusalDescription = refusalDescription
        self.paymentInstrument = paymentInstrument
        self.links = links
    }

    /// Reads a Worldpay customer-initiated-transaction or action response body; `nil` without an `outcome`.
    public init?(worldpayResponse body: JSONValue) {
        guard let outcome = body["outcome"]?.stringValue ?? body["lastEvent"]?.stringValue else { return nil }
        let links = PaymentLinks(worldpayLinks: body["_links"])
        self.init(outcome: outcome, refusalCode: body["refusalCode"]?.stringValue,
                  refusalDescription: body["refusalDescription"]?.stringValue,
                  paymentInstrument: body["paymentInstrument"].map(MaskedPaymentInstrument.init(worldpay:)),
                  links: links.isEmpty ? nil : links)
    }
}
