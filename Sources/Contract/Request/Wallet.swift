/// The device wallet a card is provisioned into.
public enum Wallet: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Apple Pay (PassKit in-app provisioning).
    case applePay = "apple_pay"
    /// Google Wallet Unified Push Provisioning (UPP).
    case googleWallet = "google_wallet"
    /// Legacy Google Pay push provisioning.
    case googlePay = "google_pay"

    /// The wire name.
    public var description: String { rawValue }
}
