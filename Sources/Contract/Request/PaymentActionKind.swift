/// What to do with an authorized payment.
public enum PaymentActionKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Settle the full amount (`cardPayments:settle`).
    case settle
    /// Settle part of the amount (`cardPayments:partialSettle`); needs `amount`.
    case partialSettle = "partial_settle"
    /// Cancel the authorization (`cardPayments:cancel`).
    case cancel

    /// The wire name.
    public var description: String { rawValue }
}
