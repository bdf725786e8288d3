/// What the requesting app should do next (CONTRACT section 4).
public enum NextAction: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Hand the decrypted payload to the wallet SDK.
    case addToWallet = "add_to_wallet"
    /// Nothing to do.
    case none
    /// Start the wallet flow again (Apple: new PassKit handshake; Google UPP: new callback).
    case restartWalletFlow = "restart_wallet_flow"
    /// Send the request again with a new `request_id` (Legacy Google Pay may reuse its ids; payments not charged).
    case retry
    /// Show the error; retrying will not help.
    case surfaceError = "surface_error"
    /// Ask the device wallet whether the card is there.
    case checkWallet = "check_wallet"

    /// The wire name.
    public var description: String { rawValue }
}
