/// JSON Web Encryption (RFC 7516) in compact serialization with `alg` `ECDH-ES` (direct key
/// agreement, RFC 7518 section 4.6) and `enc` `A256GCM`, as CONTRACT section 4 specifies for result
/// payloads.
///
/// Protected header: `{"alg":"ECDH-ES","enc":"A256GCM","epk":{"crv":"P-256","kty":"EC","x":…,"y":…}}`.
/// The content key is Concat KDF(SHA-256, Z, AlgorithmID "A256GCM", empty PartyUInfo and PartyVInfo,
/// 256 bits); the encrypted-key part is empty; the AAD is the ASCII of the encoded protected header.
public enum JWE {
    /// Encrypts `plaintext` to `recipient` with a fresh ephemeral key; returns the compact form
    /// `header..iv.ciphertext.tag`.
    public static func encrypt(_ plaintext: [UInt8], to recipient: ECPublicJWK) throws(CryptoError) -> String {
        let ephemeral = try EVPKey.generateP256()
        let sharedSecret = try ephemeral.sharedSecret(with: recipient.key)
        let contentKey = ConcatKDF.deriveKey(sharedSecret: sharedSecret, algorithmID: "A256GCM", keyDataLengthBits: 256)
        let point = try ephemeral.uncompressedPoint()
        // The header as JSONWriter writes the JSONValue form (keys sorted), written directly.
        var header = JSONWriter(capacity: 160)
        header.beginObject()
        header.key("alg"); header.string("ECDH-ES")
        header.key("enc"); header.string("A256GCM")
        header.key("epk")
        header.beginObject()
        header.key("crv"); header.string("P-256")
        header.key("kty"); header.string("EC")
        header.key("x"); header.string(Base64.encode(point[1..<33], url: true))
        header.key("y"); header.string(Base64.encode(point[33..<65], url: true))
        header.endObject()
        header.endObject()
        var compact = [UInt8]()
        compact.reserveCapacity((header.bytes.count + plaintext.count + 40) * 4 / 3 + 16)
        Base64.append(header.bytes, url: true, to: &compact)
        let iv = Crypto.randomBytes(12)
        // The AAD is the ASCII of the encoded header: the bytes written so far.
        let sealed = try Crypto.aes256GCMSeal(key: contentKey, iv: iv, plaintext: plaintext, additionalData: compact)
        compact.append(UInt8(ascii: "."))
        compact.append(UInt8(ascii: "."))
        Base64.append(iv, url: true, to: &compact)
        compact.append(UInt8(ascii: "."))
        Base64.append(sealed.ciphertext, url: true, to: &compact)
        compact.append(UInt8(ascii: "."))
        Base64.append(sealed.tag, url: true, to: &compact)
        return String(decoding: compact, as: UTF8.self)
    }

    /// Decrypts a compact JWE produced with `ECDH-ES` + `A256GCM` for `privateKey`.
    ///
    /// Rejects other algorithms, a non-empty encrypted key, `zip`, `crit`, and an `epk` that is not a
    /// valid P-256 point.
    public static func decrypt(_ compact: String, with privateKey: ECPrivateKey) throws(CryptoError) -> [UInt8] {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5 else {
            throw CryptoError(code: .invalidJWE, message: "a compact JWE has five dot-separated parts")
        }
        guard parts[1].isEmpty else {
            throw CryptoError(code: .invalidJWE, message: "ECDH-ES (direct) carries no encrypted key; the second part must be empty")
        }
        let encodedHeader = String(parts[0])
        guard let headerBytes = Crypto.base64URLDecode(encodedHeader),
              let header = try? JSONParser(maxDepth: 8, maxBytes: 4096).parse(headerBytes),
              header.objectValue != nil
        else {
            throw CryptoError(code: .invalidJWE, message: "the protected header is not base64url JSON")
        }
        guard header["alg"]?.stringValue == "ECDH-ES", header["enc"]?.stringValue == "A256GCM" else {
            throw CryptoError(code: .invalidJWE, message: "only alg ECDH-ES with enc A256GCM is supported")
        }
        guard header["zip"] == nil, header["crit"] == nil else {
            throw CryptoError(code: .invalidJWE, message: "zip and crit header parameters are not supported")
        }
        guard let epkValue = header["epk"] else {
            throw CryptoError(code: .invalidJWE, message: "the protected header lacks epk")
        }
        let ephemeralPublic = try ECPublicJWK(jwk: epkValue)
        guard let iv = Crypto.base64URLDecode(String(parts[2])), iv.count == 12,
              let ciphertext = Crypto.base64URLDecode(String(parts[3])),
              let tag = Crypto.base64URLDecode(String(parts[4])), tag.count == 16
        else {
            throw CryptoError(code: .invalidJWE, message: "iv, ciphertext and tag must be base64url (12-byte iv, 16-byte tag)")
        }
        let sharedSecret = try privateKey.key.sharedSecret(with: ephemeralPublic.key)
        let contentKey = ConcatKDF.deriveKey(sharedSecret: sharedSecret, algorithmID: "A256GCM", keyDataLengthBits: 256)
        return try Crypto.aes256GCMOpen(key: contentKey, iv: iv, ciphertext: ciphertext, tag: tag,
                                        additionalData: Array(encodedHeader.utf8))
    }
}
