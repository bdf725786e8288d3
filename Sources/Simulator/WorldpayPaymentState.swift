/// Where a simulated Worldpay payment stands; the raw value is the `lastEvent` the events queries report.
enum WorldpayPaymentState: String, Sendable {
    case authorized
    case refused
    case settled
    case partiallySettled
    case cancelled
}
