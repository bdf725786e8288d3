/// A wallet token the simulator created: one card in one wallet on one device.
struct WalletTokenRecord: Sendable, Hashable {
    /// `wt_` and 24 hex digits.
    let id: String
    /// `apple_pay`, `google_wallet` or `google_pay`.
    let wallet: String
    /// SHA-256 hex of the Apple leaf certificate DER, or of the Google device id.
    let deviceRef: String
    /// Creation time, epoch milliseconds.
    let createdAtMs: Int64
    /// The reference of the handshake whose call created it (`HandshakeReference`).
    let handshake: String
}
