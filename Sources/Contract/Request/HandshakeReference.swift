/// A digest that names one wallet handshake without revealing it: what an issuer's state query
/// reports for the call that created a wallet token, what reconciliation compares with its own
/// request's, and what the issuer simulator's call log counts.
///
/// Apple: SHA-256 hex of the nonce's decoded bytes (of its UTF-8 text when it is not strict
/// base64). Google: SHA-256 hex of wallet id, device id and server session id concatenated as
/// UTF-8 without separators (an absent session id counts as empty). Legacy Google Pay re-sends its
/// stable wallet and device ids, so its reference recurs across attempts; Apple's and Google
/// Wallet's are single-use like their handshakes.
public enum HandshakeReference {
    /// The reference of an Apple handshake with `nonce`.
    public static func apple(nonce: String) -> String {
        if let bytes = Crypto.base64Decode(nonce), !bytes.isEmpty { return Crypto.hex(Crypto.sha256(bytes)) }
        return Crypto.hex(Crypto.sha256(utf8: nonce))
    }

    /// The reference of a Google handshake.
    public static func google(walletID: String, deviceID: String, serverSessionID: String?) -> String {
        Crypto.hex(Crypto.sha256(utf8: walletID + deviceID + (serverSessionID ?? "")))
    }

    /// The reference of `request`'s handshake; `nil` for payments and for a request lacking its
    /// wallet's values.
    public static func of(_ request: ProvisioningRequest) -> String? {
        guard request.kind == .provision else { return nil }
        switch request.wallet {
        case .applePay:
            return request.apple.map { apple(nonce: $0.nonce.revealed) }
        case .googleWallet, .googlePay:
            return request.google.map {
                google(walletID: $0.walletID.revealed, deviceID: $0.deviceID.revealed, serverSessionID: $0.serverSessionID?.revealed)
            }
        }
    }

    /// Whether `text` has a reference's form: 64 lowercase hex digits.
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
