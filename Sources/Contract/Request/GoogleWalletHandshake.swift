/// The values Google's callback supplies for Google Wallet UPP or Legacy Google Pay (`google` in the request).
public struct GoogleWalletHandshake: Sendable, Hashable {
    /// The active wallet id (DCS `clientCustomerId`).
    public var walletID: Sensitive
    /// The stable hardware id of the device.
    public var deviceID: Sensitive
    /// Google's decision whether this attempt also needs a Google OPC (default `false`), passed on unchanged.
    public var googleOPCRequested: Bool
    /// Google's server session id; required when `googleOPCRequested` is true and never invented.
    public var serverSessionID: Sensitive?

    /// Creates a handshake.
    public init(walletID: Sensitive, deviceID: Sensitive, googleOPCRequested: Bool = false, serverSessionID: Sensitive? = nil) {
        self.walletID = walletID
        self.deviceID = deviceID
        self.googleOPCRequested = googleOPCRequested
        self.serverSessionID = serverSessionID
    }
}
