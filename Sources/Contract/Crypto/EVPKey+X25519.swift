import COpenSSL

/// X25519 keys (RFC 7748) as raw 32-byte strings, the form RFC 8037's `OKP` JWKs carry.
extension EVPKey {
    /// One X25519 key pair made at first use, used only to test imported public keys for small
    /// order (a derivation OpenSSL refuses because the result would be zero).
    private static let smallOrderProbe: EVPKey = {
        do {
            return try EVPKey.generate(.x25519)
        } catch {
            fatalError("OpenSSL cannot generate an X25519 key (\(error)); install libssl3 with its default provider")
        }
    }()

    /// Whether the key is an X25519 key.
    var isX25519: Bool { EVP_PKEY_get_base_id(pointer) == EVP_PKEY_X25519 }

    /// Imports a public X25519 key (the u-coordinate, 32 bytes little-endian); with
    /// `checkingOrder`, checks it is not of small order (its shared secret with any key would be
    /// all zeros, RFC 7748 section 6.1) at the cost of one probe derivation. A key used once (a
    /// JWE's `epk`) can skip the probe: its own derivation fails the same way.
    static func x25519PublicKey(raw: [UInt8], checkingOrder: Bool = true) throws(CryptoError) -> EVPKey {
        guard raw.count == 32 else {
            throw CryptoError(code: .invalidKey, message: "an X25519 public key is 32 bytes")
        }
        guard let key = EVP_PKEY_new_raw_public_key_ex(nil, "X25519", nil, raw, raw.count) else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "not an X25519 public key; send the 32-byte u-coordinate")
        }
        let owned = EVPKey(taking: key)
        guard checkingOrder else { return owned }
        do {
            _ = try smallOrderProbe.sharedSecret(with: owned)
        } catch {
            throw CryptoError(code: .invalidKey, message: "the X25519 public key is of small order (every shared secret would be zero); send a key made by X25519 key generation")
        }
        return owned
    }

    /// Imports a private X25519 key (the 32-byte scalar as RFC 7748 writes it).
    static func x25519PrivateKey(raw: [UInt8]) throws(CryptoError) -> EVPKey {
        guard raw.count == 32, let key = EVP_PKEY_new_raw_private_key_ex(nil, "X25519", nil, raw, raw.count) else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "an X25519 private key is 32 bytes")
        }
        return EVPKey(taking: key)
    }

    /// The raw public key (32 bytes).
    func rawPublicKey() throws(CryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length = output.count
        guard EVP_PKEY_get_raw_public_key(pointer, &output, &length) == 1, length == 32 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "could not read the X25519 public key")
        }
        return output
    }

    /// The raw private key (32 bytes).
    func rawPrivateKey() throws(CryptoError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length = output.count
        guard EVP_PKEY_get_raw_private_key(pointer, &output, &length) == 1, length == 32 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "the key has no X25519 private part; use a private key")
        }
        return output
    }
}
