/// What a request asks for.
public enum RequestKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Push-provision a card into a wallet (the default when `kind` is absent).
    case provision
    /// Authorize an Apple Pay payment through Worldpay (CONTRACT section 8).
    case payment
    /// Settle, partially settle or cancel an authorized Worldpay payment through its action link.
    case paymentAction = "payment_action"

    /// The wire name.
    public var description: String { rawValue }
}
