/// A simulated Worldpay payment, keyed by program and transaction reference.
struct WorldpayPayment: Sendable {
    /// Internal id, carried (signed) inside the action links.
    let id: String
    /// The program that made it.
    let program: String
    /// The merchant's transaction reference.
    let reference: String
    /// ISO 4217 currency.
    let currency: String
    /// Authorized amount, minor units.
    let amount: Int64
    /// Settled so far, minor units.
    var settledAmount: Int64 = 0
    /// Current state.
    var state: WorldpayPaymentState
    /// Last four digits of the (simulated) device token.
    let lastFour: String
}
