/// One wallet token the simulator holds (a line of `GET /_sim/wallet`): a card in one wallet on
/// one device, and the handshake whose call made it. The wallet state the finals of the black-box
/// suites are judged by (`FinalTruth`).
public struct SimulatorWalletToken: Sendable, Hashable {
    /// The issuer prefix: `imprint`, `dcs` or `gnosis`.
    public var issuer: String
    /// The card id as the issuer knows it.
    public var cardID: String
    /// `apple_pay`, `google_wallet` or `google_pay`.
    public var wallet: String
    /// SHA-256 hex of the Apple leaf certificate DER, or of the Google device id.
    public var deviceRef: String
    /// The reference of the handshake whose call made it (`HandshakeReference`).
    public var handshake: String
    /// When it was made, epoch milliseconds (the simulator's clock).
    public var createdAtMs: Int64

    /// The facts `FinalTruth` judges a request by: how often `handshake` reached the issuer
    /// (`calls`), whether its call made a token, and since when the request's card was in that
    /// wallet on that device (`tokens`).
    public static func facts(handshake: String, cardID: String, wallet: String, deviceRef: String,
                             calls: [SimulatorCall], tokens: [SimulatorWalletToken]) -> FinalTruth.Facts {
        let held = tokens.filter { $0.cardID == cardID && $0.wallet == wallet && $0.deviceRef == deviceRef }
        return FinalTruth.Facts(calls: calls.filter { $0.handshake == handshake }.reduce(0) { $0 + $1.count },
                                applied: held.contains { $0.handshake == handshake },
                                cardInWalletSinceMs: held.map(\.createdAtMs).min())
    }
}
