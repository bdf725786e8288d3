/// Whether a request may still be sent to its issuer.
public enum Admission: Sendable, Hashable {
    /// Go ahead; the issuer call must finish within `budgetMs` (time until `publishByMs`).
    case admit(budgetMs: Int64)
    /// Too late: publish an `expired` result with `deadline_exceeded`, do not call the issuer.
    case expired

    /// Whether the request was admitted.
    public var isAdmitted: Bool {
        if case .admit = self { return true }
        return false
    }
}
