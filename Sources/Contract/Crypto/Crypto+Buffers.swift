import COpenSSL

/// The allocation-free forms of the hot primitives: each writes into memory the caller provides
/// and runs on a pooled OpenSSL context (`ContextPool`), so a JWE, a pseudonym or a thumbprint
/// costs no context allocation and no intermediate array. The public `Crypto` functions are thin
/// wrappers around these.
extension Crypto {
    /// SHA-256 of `bytes` into `output` (32 bytes).
    static func sha256(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) {
        let algorithms = OpenSSLAlgorithms.shared
        guard let context = algorithms.digestContexts.take() else {
            preconditionFailure("EVP_MD_CTX_new failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        var length: UInt32 = 0
        guard EVP_DigestInit_ex2(context, algorithms.sha256, nil) == 1,
              EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1,
              EVP_DigestFinal_ex(context, output, &length) == 1, length == 32
        else {
            algorithms.digestContexts.discard(context)
            preconditionFailure("SHA-256 failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        algorithms.digestContexts.give(context)
    }

    /// HMAC-SHA256 under `key` of everything `feed` passes to its `update` argument, in order,
    /// into `output` (32 bytes). The keyed context is made once per distinct key
    /// (`HMACKeyCache`); each MAC re-initialises a pooled copy of it.
    static func hmacSHA256(key: [UInt8], into output: UnsafeMutablePointer<UInt8>,
                           feed: (_ update: (UnsafeRawBufferPointer) -> Void) -> Void) {
        guard let template = HMACKeyCache.shared.template(for: key), let context = template.contexts.take() else {
            preconditionFailure("HMAC-SHA256 setup failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        // A NULL key re-initialises the context with the key it holds (EVP_MAC_init(3)).
        var status = EVP_MAC_init(context, nil, 0, nil) == 1
        feed { bytes in
            if status, bytes.count > 0 { status = EVP_MAC_update(context, bytes.baseAddress, bytes.count) == 1 }
        }
        var length = 0
        guard status, EVP_MAC_final(context, output, &length, 32) == 1, length == 32 else {
            template.contexts.discard(context)
            preconditionFailure("HMAC-SHA256 failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        template.contexts.give(context)
    }

    /// Lowercase hexadecimal of raw bytes (one allocation: the string's).
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { output in
            digits.withUTF8Buffer { table in
                for (index, byte) in bytes.enumerated() {
                    output[2 * index] = table[Int(byte >> 4)]
                    output[2 * index + 1] = table[Int(byte & 0x0F)]
                }
            }
            return bytes.count * 2
        }
    }

    /// AES-256-GCM encryption of `plaintext` with a 32-byte `key` and a 12-byte `iv`: the
    /// ciphertext into `ciphertext` (`plaintext.count` bytes) and the 16-byte tag into `tag`.
    static func aes256GCMSeal(key: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
                              additionalData: UnsafeRawBufferPointer, ciphertext: UnsafeMutablePointer<UInt8>,
                              tag: UnsafeMutablePointer<UInt8>) throws(CryptoError) {
        guard key.count == 32, iv.count == 12 else {
            throw CryptoError(code: .invalidInput, message: "AES-256-GCM needs a 32-byte key and a 12-byte IV")
        }
        let pool = OpenSSLAlgorithms.shared.gcmEncryptionContexts
        guard let context = pool.take() else {
            throw CryptoError(code: .openSSL, message: "EVP_CIPHER_CTX_new failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        // The context already holds the cipher: only the key and the IV are set (no allocation).
        guard EVP_EncryptInit_ex2(context, nil, key.baseAddress, iv.baseAddress, nil) == 1,
              additionalData.isEmpty
                || EVP_EncryptUpdate(context, nil, &written, additionalData.baseAddress, Int32(additionalData.count)) == 1,
              plaintext.isEmpty || EVP_EncryptUpdate(context, ciphertext, &written, plaintext.baseAddress, Int32(plaintext.count)) == 1,
              EVP_EncryptFinal_ex(context, ciphertext + (plaintext.isEmpty ? 0 : Int(written)), &finalWritten) == 1,
              finalWritten == 0, plaintext.isEmpty || Int(written) == plaintext.count,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1
        else {
            pool.discard(context)
            throw CryptoError(code: .openSSL, message: "AES-256-GCM encryption failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        pool.give(context)
    }
}
