/// The issuer API a program talks to.
public enum IssuerKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Imprint "Add to Wallet".
    case imprint
    /// DCS (DeCard) wallet binding.
    case dcs
    /// Gnosis Pay Apple Pay in-app provisioning.
    case gnosis
    /// Worldpay Apple Pay payments.
    case worldpay

    /// The wire name.
    public var description: String { rawValue }
}
