import Contract

/// One line of `GET /_sim/calls`: how often an issuer was called for one card with one handshake.
///
/// Every provisioning and payment call is counted, including those answered with an error;
/// read-only queries (Imprint's `wallet_tokens`, Worldpay events) are not.
public struct SimulatorCall: Sendable, Hashable {
    /// The issuer prefix: `imprint`, `dcs`, `gnosis` or `worldpay`.
    public var issuer: String
    /// The card id as sent (Imprint `payment_method_id`, Gnosis card id, DCS `cardId`; for DCS v1
    /// endpoints `externalUserId`), or the Worldpay `transactionReference`.
    public var cardID: String
    /// Identifies the attempt: see `appleHandshake(nonce:)`, `googleHandshake(walletID:deviceID:serverSessionID:)`,
    /// `worldpayHandshake(walletToken:)`; Worldpay follow-ups use the action name (`settle`,
    /// `partial_settle`, `cancel`).
    public var handshake: String
    /// Calls with this issuer, card and handshake.
    public var count: Int

    /// Creates a call line.
    public init(issuer: String, cardID: String, handshake: String, count: Int) {
        self.issuer = issuer
        self.cardID = cardID
        self.handshake = handshake
        self.count = count
    }

    /// The Apple handshake key: SHA-256 hex of the nonce's decoded bytes (of its UTF-8 text when it
    /// is not strict base64).
    public static func appleHandshake(nonce: String) -> String {
        HandshakeReference.apple(nonce: nonce)
    }

    /// The Google handshake key: SHA-256 hex of wallet id, device id and server session id
    /// concatenated as UTF-8 without separators (an absent session id counts as empty).
    public static func googleHandshake(walletID: String, deviceID: String, serverSessionID: String?) -> String {
        HandshakeReference.google(walletID: walletID, deviceID: deviceID, serverSessionID: serverSessionID)
    }

    /// The Worldpay handshake key: SHA-256 hex of the wallet token string's UTF-8 bytes.
    public static func worldpayHandshake(walletToken: String) -> String {
        Crypto.hex(Crypto.sha256(utf8: walletToken))
    }

    /// The line as JSON: `{"issuer","card_id","handshake","count"}`.
    public var jsonValue: JSONValue {
        .object(["issuer": .string(issuer), "card_id": .string(cardID), "handshake": .string(handshake),
                 "count": .integer(Int64(count))])
    }
}
