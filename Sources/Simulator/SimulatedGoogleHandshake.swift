import Contract

/// The values Google's payment-credentials callback would supply for one attempt.
public struct SimulatedGoogleHandshake: Sendable, Hashable {
    /// The active wallet id (stable per device).
    public var walletID: String
    /// The stable hardware id (the device's name).
    public var deviceID: String
    /// Whether Google asks for the additional OPC.
    public var googleOPCRequested: Bool
    /// Google's session id for this attempt (present when the OPC is requested).
    public var serverSessionID: String?

    /// Creates a handshake.
    public init(walletID: String, deviceID: String, googleOPCRequested: Bool, serverSessionID: String?) {
        self.walletID = walletID
        self.deviceID = deviceID
        self.googleOPCRequested = googleOPCRequested
        self.serverSessionID = serverSessionID
    }

    /// SHA-256 hex of the device id: Imprint's `device_ref` for this device.
    public var deviceRef: String { Crypto.hex(Crypto.sha256(utf8: deviceID)) }

    /// The `/_sim/calls` handshake key.
    public var callHandshake: String {
        SimulatorCall.googleHandshake(walletID: walletID, deviceID: deviceID, serverSessionID: serverSessionID)
    }

    /// The handshake as the request's `google` object.
    public var walletHandshake: GoogleWalletHandshake {
        GoogleWalletHandshake(walletID: Sensitive(walletID), deviceID: Sensitive(deviceID), googleOPCRequested: googleOPCRequested,
                              serverSessionID: serverSessionID.map(Sensitive.init))
    }

    /// The Imprint request fields (`wallet_id`, `device_id`, and for UPP `google_opc_requested`,
    /// `server_session_id` when present).
    public func requestFields(legacy: Bool = false) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["wallet_id": .string(walletID), "device_id": .string(deviceID)]
        if !legacy {
            fields["google_opc_requested"] = .bool(googleOPCRequested)
            if let serverSessionID { fields["server_session_id"] = .string(serverSessionID) }
        }
        return fields
    }
}
