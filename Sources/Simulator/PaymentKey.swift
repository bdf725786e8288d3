/// Identifies a Worldpay payment: the calling program and its transaction reference.
struct PaymentKey: Hashable, Sendable {
    let program: String
    let reference: String
}
