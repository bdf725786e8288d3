/// The result of settling, partially settling or cancelling a simulated payment.
enum PaymentActionOutcome: Sendable {
    /// Done; the payment as it now stands.
    case done(WorldpayPayment)
    /// No such payment for this program.
    case notFound
    /// The payment's state does not allow the action.
    case conflict(WorldpayPaymentState)
    /// A partial settlement over the amount still open.
    case amountTooHigh(remaining: Int64)
    /// A partial settlement in another currency.
    case currencyMismatch(expected: String)
}
