import COpenSSL

/// JSON Web Encryption (RFC 7516) in compact serialization with `alg` `ECDH-ES` (direct key
/// agreement, RFC 7518 section 4.6) and `enc` `A256GCM`, as CONTRACT section 4 specifies for result
/// payloads, to a P-256 key (RFC 7518) or an X25519 key (RFC 8037 section 3.2).
///
/// Protected header: `{"alg":"ECDH-ES","enc":"A256GCM","epk":{"crv":"P-256","kty":"EC","x":…,"y":…}}`,
/// or with `"epk":{"crv":"X25519","kty":"OKP","x":…}`. The content key is Concat KDF(SHA-256, Z,
/// AlgorithmID "A256GCM", empty PartyUInfo and PartyVInfo, 256 bits); the encrypted-key part is
/// empty; the AAD is the ASCII of the encoded protected header.
public enum JWE {
    /// Encrypts `plaintext` to a P-256 `recipient`; see `encrypt(_:to:)` with a `JWERecipient`.
    public static func encrypt(_ plaintext: [UInt8], to recipient: ECPublicJWK) throws(CryptoError) -> String {
        try encrypt(plaintext, to: .p256(recipient))
    }

    /// Encrypts `plaintext` to `recipient` with a fresh ephemeral key on its curve, made ahead by
    /// `EphemeralKeyPool` and used for this message only; returns the compact form
    /// `header..iv.ciphertext.tag`.
    public static func encrypt(_ plaintext: [UInt8], to recipient: JWERecipient) throws(CryptoError) -> String {
        let ephemeral = try EphemeralKeyPool.shared(recipient.curve).take()
        let sharedSecret = try ephemeral.agree(with: recipient.key)
        let contentKey = ConcatKDF.deriveKey(sharedSecret: sharedSecret, algorithmID: "A256GCM", keyDataLengthBits: 256)
        let header = ephemeral.encodedHeader
        var compact = [UInt8]()
        compact.reserveCapacity(header.count + 2 + 17 + (plaintext.count + 2) / 3 * 4 + 1 + 23)
        compact.append(contentsOf: header)
        compact.append(UInt8(ascii: "."))
        compact.append(UInt8(ascii: "."))
        // iv ‖ tag ‖ ciphertext in one temporary buffer; the compact form is the only array made.
        // (Array's pointer accessors rethrow untyped errors: the typed one is carried out in `outcome`.)
        var outcome: Result<Void, CryptoError> = .success(())
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 12 + 16 + max(1, plaintext.count)) { scratch in
            let base = scratch.baseAddress!
            guard RAND_bytes(base, 12) == 1 else {
                outcome = .failure(CryptoError(code: .openSSL, message: "RAND_bytes failed: \(OpenSSLAlgorithms.drainErrors())"))
                return
            }
            // The AAD is the ASCII of the encoded header.
            contentKey.withUnsafeBytes { key in
                plaintext.withUnsafeBytes { plaintext in
                    header.withUnsafeBytes { header in
                        do throws(CryptoError) {
                            try Crypto.aes256GCMSeal(key: key, iv: UnsafeRawBufferPointer(start: base, count: 12), plaintext: plaintext,
                                                     additionalData: header, ciphertext: base + 28, tag: base + 12)
                        } catch {
                            outcome = .failure(error)
                        }
                    }
                }
            }
            guard case .success = outcome else { return }
            Base64.append(UnsafeBufferPointer(start: base, count: 12), url: true, to: &compact)
            compact.append(UInt8(ascii: "."))
            Base64.append(UnsafeBufferPointer(start: base + 28, count: plaintext.count), url: true, to: &compact)
            compact.append(UInt8(ascii: "."))
            Base64.append(UnsafeBufferPointer(start: base + 12, count: 16), url: true, to: &compact)
        }
        try outcome.get()
        return String(decoding: compact, as: UTF8.self)
    }

    /// Decrypts a compact JWE produced with `ECDH-ES` + `A256GCM` for a P-256 `privateKey`.
    public static func decrypt(_ compact: String, with privateKey: ECPrivateKey) throws(CryptoError) -> [UInt8] {
        try decrypt(compact, with: .p256(privateKey))
    }

    /// Decrypts a compact JWE produced with `ECDH-ES` + `A256GCM` for `privateKey`.
    ///
    /// Rejects other algorithms, a non-empty encrypted key, `zip`, `crit`, and an `epk` that is
    /// not a valid key on the private key's curve (P-256: a point on the curve; X25519: 32 bytes,
    /// not of small order).
    public static func decrypt(_ compact: String, with privateKey: ReplyPrivateKey) throws(CryptoError) -> [UInt8] {
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
        guard let epk = header["epk"] else {
            throw CryptoError(code: .invalidJWE, message: "the protected header lacks epk")
        }
        guard JWKCurve(keyType: epk["kty"]?.stringValue ?? "", curve: epk["crv"]?.stringValue ?? "") == privateKey.curve else {
            throw CryptoError(code: .invalidJWE,
                              message: "the epk is not a \(privateKey.curve.rawValue) key (kty \(privateKey.curve.keyType)), the private key's curve")
        }
        // Ephemeral keys are imported afresh (caching them would only evict reply keys); a
        // small-order X25519 epk makes the derivation below fail, so it needs no probe of its own.
        let ephemeralKey = switch privateKey.curve {
        case .p256: try ECPublicJWK(jwk: epk, cache: nil).key
        case .x25519: try X25519PublicJWK(jwk: epk, cache: nil, checkingOrder: false).key
        }
        guard let iv = Crypto.base64URLDecode(String(parts[2])), iv.count == 12,
              let ciphertext = Crypto.base64URLDecode(String(parts[3])),
              let tag = Crypto.base64URLDecode(String(parts[4])), tag.count == 16
        else {
            throw CryptoError(code: .invalidJWE, message: "iv, ciphertext and tag must be base64url (12-byte iv, 16-byte tag)")
        }
        let sharedSecret = try privateKey.key.sharedSecret(with: ephemeralKey)
        let contentKey = ConcatKDF.deriveKey(sharedSecret: sharedSecret, algorithmID: "A256GCM", keyDataLengthBits: 256)
        return try Crypto.aes256GCMOpen(key: contentKey, iv: iv, ciphertext: ciphertext, tag: tag,
                                        additionalData: Array(encodedHeader.utf8))
    }
}
