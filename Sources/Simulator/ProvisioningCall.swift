/// A validated provisioning call, reduced to what decides its outcome.
struct ProvisioningCall: Sendable {
    /// The card in the simulator's tables.
    var card: CardKey
    /// The behaviour its suffix selects.
    var magic: MagicBehaviour
    /// `apple_pay`, `google_wallet` or `google_pay`.
    var wallet: String
    /// The device identity (`WalletTokenRecord.deviceRef`).
    var deviceRef: String
    /// Whether the device or wallet id (Apple: the leaf's common name) ends in `-ineligible`.
    var deviceIneligible: Bool
    /// The Apple nonce digest, for the single-use rule.
    var nonce: DigestKey?
    /// The handshake's reference (`HandshakeReference`), kept on the token the call creates.
    var handshake = ""
}
