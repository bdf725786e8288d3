import Contract

/// Decrypts the simulator's Apple `encrypted_pass_data` with the leaf certificate's private key, so
/// tests can prove the pipeline relays the issuer's payload byte for byte.
///
/// The scheme (the simulator's own, modelled on Apple's ECC scheme; the guides leave it to the issuer):
/// - `ephemeral_public_key`: base64 of an uncompressed P-256 point (65 bytes, `04 || X || Y`).
/// - `Z` = ECDH(ephemeral private key, leaf public key): the 32-byte x-coordinate.
/// - key = NIST SP 800-56A Concat KDF with SHA-256 (`ConcatKDF`), 256 bits, AlgorithmID
///   `id-aes256-GCM`, PartyUInfo `Apple`, PartyVInfo the 65-byte ephemeral point (each
///   length-prefixed, 32-bit big-endian, as in JOSE).
/// - `encrypted_pass_data`: base64 of `IV (12 bytes) || AES-256-GCM ciphertext || tag (16 bytes)`,
///   no additional authenticated data.
/// - The plaintext is a JSON object:
///   `{"primaryAccountSuffix","cardholderName","expiration","networkName","issuer","cardId","nonce","nonceSignature","issuedAt"}`
///   where `nonce` and `nonceSignature` are the base64 strings of the request.
public enum ApplePassDecryptor {
    /// IV length in bytes.
    static let ivLength = 12
    /// GCM tag length in bytes.
    static let tagLength = 16

    /// Decrypts to the plaintext bytes.
    public static func decrypt(encryptedPassData: String, ephemeralPublicKey: String,
                               leafPrivateKey: ECPrivateKey) throws(CryptoError) -> [UInt8] {
        guard let sealed = Crypto.base64Decode(encryptedPassData), sealed.count >= ivLength + tagLength else {
            throw CryptoError(code: .invalidInput, message: "encrypted_pass_data must be base64 of IV, ciphertext and tag")
        }
        guard let point = Crypto.base64Decode(ephemeralPublicKey), point.count == 65, point[0] == 0x04 else {
            throw CryptoError(code: .invalidKey, message: "ephemeral_public_key must be base64 of an uncompressed P-256 point")
        }
        let sharedSecret = try Crypto.p256SharedSecret(privateKey: leafPrivateKey, peerPublicKey: point)
        let key = symmetricKey(sharedSecret: sharedSecret, ephemeralPoint: point)
        let iv = Array(sealed[0..<ivLength])
        let ciphertext = Array(sealed[ivLength..<(sealed.count - tagLength)])
        let tag = Array(sealed[(sealed.count - tagLength)...])
        return try Crypto.aes256GCMOpen(key: key, iv: iv, ciphertext: ciphertext, tag: tag, additionalData: [])
    }

    /// Decrypts and parses the plaintext JSON object.
    public static func decryptJSON(encryptedPassData: String, ephemeralPublicKey: String,
                                   leafPrivateKey: ECPrivateKey) throws(CryptoError) -> JSONValue {
        let plaintext = try decrypt(encryptedPassData: encryptedPassData, ephemeralPublicKey: ephemeralPublicKey,
                                    leafPrivateKey: leafPrivateKey)
        guard let document = try? JSONParser().parse(plaintext) else {
            throw CryptoError(code: .invalidInput, message: "the decrypted pass data is not JSON")
        }
        return document
    }

    /// The AES-256 key for a shared secret and the ephemeral point it came from.
    static func symmetricKey(sharedSecret: [UInt8], ephemeralPoint: [UInt8]) -> [UInt8] {
        ConcatKDF.deriveKey(sharedSecret: sharedSecret, algorithmID: "id-aes256-GCM", partyUInfo: Array("Apple".utf8),
                            partyVInfo: ephemeralPoint, keyDataLengthBits: 256)
    }
}
