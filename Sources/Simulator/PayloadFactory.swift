import Contract

/// Builds the issuers' success payloads: realistic sizes, cheap to make.
///
/// - Apple: `encrypted_pass_data` really encrypted to the leaf certificate (`ApplePassDecryptor`
///   describes the scheme), `ephemeral_public_key` the 65-byte uncompressed ephemeral point,
///   `activation_data` 64 bytes: HMAC-SHA256(activation key, nonce) ‖ HMAC-SHA256(activation key,
///   nonce signature), with a random activation key per simulator.
/// - Google: `opaque_payment_card` a compact-JWE-shaped string (base64url header naming the issuer's
///   simulated TSP key, then random encrypted key, IV, 480-byte ciphertext and tag);
///   `google_provisioning_payload` standard base64 of another such string.
struct PayloadFactory: Sendable {
    /// The Apple `provisioning_payload` values, base64.
    struct AppleValues: Sendable {
        let activationData: String
        let encryptedPassData: String
        let ephemeralPublicKey: String
    }

    let activationKey: [UInt8]
    let encryptor: ApplePassEncryptor
    private let opaqueHeaders: [IssuerKind: String]
    private let googleOPCHeader: String

    init(encryptor: ApplePassEncryptor) {
        self.encryptor = encryptor
        activationKey = Crypto.randomBytes(32)
        var headers: [IssuerKind: String] = [:]
        for issuer in IssuerKind.allCases {
            headers[issuer] = Self.header(kid: "sim-\(issuer.rawValue)-tsp-2026")
        }
        opaqueHeaders = headers
        googleOPCHeader = Self.header(kid: "sim-google-opc-2026")
    }

    private static func header(kid: String) -> String {
        let json = "{\"kid\":\"\(kid)\",\"alg\":\"ECDH-ES+A256KW\",\"enc\":\"A256GCM\",\"typ\":\"JOSE\"}"
        return Crypto.base64URLEncode(Array(json.utf8))
    }

    private static func jweShaped(header: String) -> String {
        let random = Crypto.randomBytes(40 + 12 + 480 + 16)
        var text = header
        text.reserveCapacity(header.utf8.count + 740)
        text += "."
        text += Crypto.base64URLEncode(Array(random[0..<40]))
        text += "."
        text += Crypto.base64URLEncode(Array(random[40..<52]))
        text += "."
        text += Crypto.base64URLEncode(Array(random[52..<532]))
        text += "."
        text += Crypto.base64URLEncode(Array(random[532...]))
        return text
    }

    /// An opaque payment card from `issuer`'s simulated token service provider.
    func opaquePaymentCard(issuer: IssuerKind) -> String {
        Self.jweShaped(header: opaqueHeaders[issuer] ?? googleOPCHeader)
    }

    /// The Google opaque payment card for the customer's Google Account (standard base64).
    func googleProvisioningPayload() -> String {
        Crypto.base64Encode(Array(Self.jweShaped(header: googleOPCHeader).utf8))
    }

    /// The Apple payload for a validated handshake.
    func apple(_ handshake: ValidatedAppleHandshake, issuer: IssuerKind, cardID: String, last4: String, nowMs: Int64,
               ephemeralKeyReuse: Int) throws(CryptoError) -> AppleValues {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        writer.key("primaryAccountSuffix"); writer.string(last4)
        writer.key("cardholderName"); writer.string("SIMULATED CARDHOLDER")
        writer.key("expiration"); writer.string("2029-11")
        writer.key("networkName"); writer.string("VISA")
        writer.key("issuer"); writer.string(issuer.rawValue)
        writer.key("cardId"); writer.string(cardID)
        writer.key("nonce"); writer.string(handshake.nonce)
        writer.key("nonceSignature"); writer.string(handshake.nonceSignature)
        writer.key("issuedAt"); writer.string(RFC3339.format(milliseconds: nowMs))
        writer.endObject()
        let (sealed, point) = try encryptor.encrypt(writer.bytes, to: handshake.leaf, reuse: ephemeralKeyReuse)
        var activation = Crypto.hmacSHA256(key: activationKey, data: handshake.nonceBytes)
        activation.append(contentsOf: Crypto.hmacSHA256(key: activationKey, data: handshake.nonceSignatureBytes))
        return AppleValues(activationData: Crypto.base64Encode(activation), encryptedPassData: Crypto.base64Encode(sealed),
                           ephemeralPublicKey: Crypto.base64Encode(point))
    }

    /// The last four digits the simulator gives a card: derived from its id (stable).
    static func last4(cardID: String) -> String {
        let digest = Crypto.sha256(utf8: cardID)
        let value = (Int(digest[0]) << 8 | Int(digest[1])) % 10_000
        let text = String(value)
        return String(repeating: "0", count: 4 - text.count) + text
    }

    /// Visa's card identifier for a card: `v-` and 40 hex digits (42 characters), stable per card.
    static func vCardID(program: String, cardID: String) -> String {
        "v-" + String(Crypto.hex(Crypto.sha256(utf8: program + "/" + cardID)).prefix(40))
    }
}
