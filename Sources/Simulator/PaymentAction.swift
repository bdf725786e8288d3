/// A follow-up on an authorized payment, selected by the link path.
enum PaymentAction: String, Sendable {
    case settle
    case partialSettle = "partial_settle"
    case cancel
}
