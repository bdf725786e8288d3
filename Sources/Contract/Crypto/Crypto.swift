import COpenSSL

/// Cryptographic helpers shared by the pipeline, the issuer adapters and the simulator, built on
/// OpenSSL 3 EVP interfaces.
public enum Crypto {
    /// SHA-256 of the bytes.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { sha256(raw: $0) }
    }

    /// SHA-256 of a string's UTF-8 bytes.
    public static func sha256(utf8 text: String) -> [UInt8] {
        var copy = text
        return copy.withUTF8 { sha256(raw: UnsafeRawBufferPointer($0)) }
    }

    /// SHA-256 of raw memory.
    public static func sha256(raw: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, count in
            sha256(raw, into: output.baseAddress!)
            count = 32
        }
    }

    /// HMAC-SHA256 (RFC 2104) of `data` under `key`. The keyed context is made once per distinct
    /// key (`HMACKeyCache`) and a pooled copy of it re-initialised for each call.
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, count in
            hmacSHA256(key: key, into: output.baseAddress!) { update in data.withUnsafeBytes { update($0) } }
            count = 32
        }
    }

    /// Cryptographically secure random bytes (OpenSSL's DRBG).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "RAND_bytes failed: \(OpenSSLAlgorithms.drainErrors())")
        return bytes
    }

    /// Standard base64 with `=` padding (RFC 4648 section 4).
    public static func base64Encode(_ bytes: [UInt8]) -> String {
        Base64.encode(bytes, url: false)
    }

    /// Decodes strict standard base64: alphabet `A–Z a–z 0–9 + /`, required `=` padding, no
    /// whitespace, zero unused bits. Returns `nil` for anything else.
    public static func base64Decode(_ text: String) -> [UInt8]? {
        Base64.decode(text)
    }

    /// Base64url without padding (RFC 4648 section 5), as JOSE uses it.
    public static func base64URLEncode(_ bytes: [UInt8]) -> String {
        Base64.encode(bytes, url: true)
    }

    /// Decodes strict unpadded base64url. Returns `nil` for anything else.
    public static func base64URLDecode(_ text: String) -> [UInt8]? {
        Base64.decodeURL(text)
    }

    /// Lowercase hexadecimal.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hex($0) }
    }

    /// Decodes hexadecimal (either case). Returns `nil` for odd lengths or other characters.
    public static func bytes(fromHex text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var output = [UInt8]()
        output.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    /// Compares two byte strings in time independent of where they differ.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<lhs.count { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    /// AES-256-GCM encryption with a 12-byte IV; returns the ciphertext and the 16-byte tag.
    public static func aes256GCMSeal(key: [UInt8], iv: [UInt8], plaintext: [UInt8],
                                     additionalData: [UInt8]) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: 16)
        // Array's pointer accessors rethrow untyped errors: the typed one is carried out in `outcome`.
        var outcome: Result<Void, CryptoError> = .success(())
        key.withUnsafeBytes { key in
            iv.withUnsafeBytes { iv in
                plaintext.withUnsafeBytes { plaintext in
                    additionalData.withUnsafeBytes { additionalData in
                        ciphertext.withUnsafeMutableBufferPointer { output in
                            tag.withUnsafeMutableBufferPointer { tag in
                                do throws(CryptoError) {
                                    try aes256GCMSeal(key: key, iv: iv, plaintext: plaintext, additionalData: additionalData,
                                                      ciphertext: output.baseAddress!, tag: tag.baseAddress!)
                                } catch {
                                    outcome = .failure(error)
                                }
                            }
                        }
                    }
                }
            }
        }
        try outcome.get()
        return (ciphertext, tag)
    }

    /// AES-256-GCM decryption; throws `authenticationFailed` when the tag does not verify.
    public static func aes256GCMOpen(key: [UInt8], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8],
                                     additionalData: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard key.count == 32, iv.count == 12, tag.count == 16 else {
            throw CryptoError(code: .invalidInput, message: "AES-256-GCM needs a 32-byte key, a 12-byte IV and a 16-byte tag")
        }
        guard let context = EVP_CIPHER_CTX_new() else {
            throw CryptoError(code: .openSSL, message: "EVP_CIPHER_CTX_new failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        var tagCopy = tag
        guard EVP_DecryptInit_ex2(context, OpenSSLAlgorithms.shared.aes256GCM, key, iv, nil) == 1,
              additionalData.isEmpty
                || EVP_DecryptUpdate(context, nil, &written, additionalData, Int32(additionalData.count)) == 1,
              EVP_DecryptUpdate(context, &plaintext, &written, ciphertext, Int32(ciphertext.count)) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, 16, &tagCopy) == 1
        else {
            throw CryptoError(code: .openSSL, message: "AES-256-GCM decryption failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        let verified = plaintext.withUnsafeMutableBufferPointer { buffer in
            EVP_DecryptFinal_ex(context, buffer.baseAddress! + Int(written), &finalWritten)
        }
        guard verified == 1 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .authenticationFailed, message: "the GCM tag does not verify: wrong key or altered data")
        }
        plaintext.removeSubrange(Int(written + finalWritten)...)
        return plaintext
    }

    /// P-256 ECDH: the 32-byte shared secret between `privateKey` and a peer public key given as an
    /// uncompressed point (65 bytes), a DER SubjectPublicKeyInfo, or a DER X.509 certificate.
    public static func p256SharedSecret(privateKey: ECPrivateKey, peerPublicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        let peer: EVPKey
        if peerPublicKey.count == 65, peerPublicKey[0] == 0x04 {
            peer = try EVPKey.publicKey(uncompressedPoint: peerPublicKey)
        } else if let spki = try? certificatePublicKey(der: peerPublicKey) {
            peer = try EVPKey.publicKey(subjectPublicKeyInfo: spki)
        } else {
            peer = try EVPKey.publicKey(subjectPublicKeyInfo: peerPublicKey)
        }
        return try privateKey.key.sharedSecret(with: peer)
    }

    /// The DER SubjectPublicKeyInfo of a DER X.509 certificate.
    public static func certificatePublicKey(der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let spki: [UInt8]? = der.withUnsafeBufferPointer { buffer in
            guard let certificate = X509Certificate.parse(buffer) else { return nil }
            defer { X509_free(certificate) }
            guard let key = X509_get0_pubkey(certificate) else { return nil }
            var output: UnsafeMutablePointer<UInt8>?
            let length = i2d_PUBKEY(key, &output)
            guard length > 0, let output else { return nil }
            defer { shim_OPENSSL_free(output) }
            return Array(UnsafeBufferPointer(start: output, count: Int(length)))
        }
        guard let spki else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidCertificate, message: "not a DER X.509 certificate with a public key")
        }
        return spki
    }
}
