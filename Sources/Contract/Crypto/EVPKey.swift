import COpenSSL

/// Owns an `EVP_PKEY` holding a P-256 or an X25519 key (`EVPKey+X25519.swift`).
///
/// `@unchecked Sendable` is safe: the key is never modified after creation, and OpenSSL allows an
/// unmodified `EVP_PKEY` to be used from several threads at once (each operation makes its own
/// `EVP_PKEY_CTX`). The key is freed in `deinit`, when no holder is left.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private static let groupName: [CChar] = Array("prime256v1".utf8CString)

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// Builds a public P-256 key from an uncompressed point (`04 || x || y`), checking that the
    /// point lies on the curve.
    static func publicKey(uncompressedPoint point: [UInt8]) throws(CryptoError) -> EVPKey {
        guard point.count == 65, point[0] == 0x04 else {
            throw CryptoError(code: .invalidKey, message: "a P-256 public point must be 65 bytes starting with 0x04")
        }
        guard let builder = OSSL_PARAM_BLD_new() else {
            throw CryptoError(code: .openSSL, message: "OSSL_PARAM_BLD_new failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { OSSL_PARAM_BLD_free(builder) }
        // The builder keeps pointers until to_param copies them, so both happen while they are valid.
        let params: UnsafeMutablePointer<OSSL_PARAM>? = groupName.withUnsafeBufferPointer { group in
            point.withUnsafeBytes { raw in
                guard OSSL_PARAM_BLD_push_utf8_string(builder, shim_OSSL_PKEY_PARAM_GROUP_NAME(), group.baseAddress, 0) == 1,
                      OSSL_PARAM_BLD_push_octet_string(builder, shim_OSSL_PKEY_PARAM_PUB_KEY(), raw.baseAddress, raw.count) == 1
                else { return nil }
                return OSSL_PARAM_BLD_to_param(builder)
            }
        }
        guard let params else {
            throw CryptoError(code: .openSSL, message: "building key parameters failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { OSSL_PARAM_free(params) }
        return try fromData(params, selection: shim_EVP_PKEY_PUBLIC_KEY())
    }

    /// Builds a P-256 key pair from the private scalar and the public point.
    static func keyPair(privateScalar: [UInt8], uncompressedPoint point: [UInt8]) throws(CryptoError) -> EVPKey {
        guard privateScalar.count == 32, point.count == 65, point[0] == 0x04 else {
            throw CryptoError(code: .invalidKey, message: "a P-256 private key needs a 32-byte scalar and a 65-byte public point")
        }
        guard let builder = OSSL_PARAM_BLD_new() else {
            throw CryptoError(code: .openSSL, message: "OSSL_PARAM_BLD_new failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard let scalar = BN_secure_new() else {
            throw CryptoError(code: .openSSL, message: "BN_secure_new failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { BN_clear_free(scalar) }
        guard BN_bin2bn(privateScalar, Int32(privateScalar.count), scalar) != nil else {
            throw CryptoError(code: .openSSL, message: "BN_bin2bn failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        let params: UnsafeMutablePointer<OSSL_PARAM>? = groupName.withUnsafeBufferPointer { group in
            point.withUnsafeBytes { raw in
                guard OSSL_PARAM_BLD_push_utf8_string(builder, shim_OSSL_PKEY_PARAM_GROUP_NAME(), group.baseAddress, 0) == 1,
                      OSSL_PARAM_BLD_push_octet_string(builder, shim_OSSL_PKEY_PARAM_PUB_KEY(), raw.baseAddress, raw.count) == 1,
                      OSSL_PARAM_BLD_push_BN(builder, shim_OSSL_PKEY_PARAM_PRIV_KEY(), scalar) == 1
                else { return nil }
                return OSSL_PARAM_BLD_to_param(builder)
            }
        }
        guard let params else {
            throw CryptoError(code: .openSSL, message: "building key parameters failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { OSSL_PARAM_free(params) }
        let key = try fromData(params, selection: shim_EVP_PKEY_KEYPAIR())
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw CryptoError(code: .openSSL, message: "EVP_PKEY_CTX_new_from_pkey failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_pairwise_check(context) == 1 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "the private scalar does not match the public point; send a consistent key")
        }
        return key
    }

    private static func fromData(_ params: UnsafeMutablePointer<OSSL_PARAM>, selection: Int32) throws(CryptoError) -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw CryptoError(code: .openSSL, message: "EVP_PKEY_CTX_new_from_name failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &key, selection, params) == 1,
              let key
        else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "the point is not on the P-256 curve; send a valid P-256 key")
        }
        let owned = EVPKey(taking: key)
        try owned.checkPublicPoint()
        return owned
    }

    /// Verifies the key is a P-256 EC key whose public point is valid (on the curve, not infinity).
    func checkPublicPoint() throws(CryptoError) {
        guard EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC else {
            throw CryptoError(code: .invalidKey, message: "not an EC key; use a P-256 key")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(pointer, shim_OSSL_PKEY_PARAM_GROUP_NAME(), &name, name.count, &length) == 1 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "the EC key names no curve; use a P-256 key")
        }
        let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard curve == "prime256v1" || curve == "P-256" else {
            throw CryptoError(code: .invalidKey, message: "the EC key is not on P-256; use a P-256 key")
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
            throw CryptoError(code: .openSSL, message: "EVP_PKEY_CTX_new_from_pkey failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_public_check_quick(context) == 1 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "the public point is not a valid P-256 point; send a valid key")
        }
    }

    /// The public point, uncompressed (`04 || x || y`).
    func uncompressedPoint() throws(CryptoError) -> [UInt8] {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pointer, shim_OSSL_PKEY_PARAM_PUB_KEY(), &point, point.count, &length) == 1,
              length == 65, point[0] == 0x04
        else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "could not read the public point as an uncompressed P-256 point")
        }
        return point
    }

    /// The private scalar, 32 bytes big-endian.
    func privateScalar() throws(CryptoError) -> [UInt8] {
        var scalar: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, shim_OSSL_PKEY_PARAM_PRIV_KEY(), &scalar) == 1, let scalar else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "the key has no private scalar; use a private key")
        }
        defer { BN_clear_free(scalar) }
        var output = [UInt8](repeating: 0, count: 32)
        guard BN_bn2binpad(scalar, &output, 32) == 32 else {
            throw CryptoError(code: .invalidKey, message: "the private scalar does not fit 32 bytes")
        }
        return output
    }

    /// ECDH: the x-coordinate of `self.private * peer.public` (P-256) or the X25519 output
    /// (RFC 7748), 32 bytes. Both keys must be on the same curve.
    func sharedSecret(with peer: EVPKey) throws(CryptoError) -> [UInt8] {
        let context = try makeDeriveContext()
        defer { EVP_PKEY_CTX_free(context) }
        return try Self.derive(context, peer: peer)
    }

    /// An `EVP_PKEY_CTX` for ECDH with this (private) key, `derive_init` done: a peer and one
    /// derivation are all it still needs. The caller frees it.
    func makeDeriveContext() throws(CryptoError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else {
            throw CryptoError(code: .openSSL, message: "EVP_PKEY_CTX_new_from_pkey failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        guard EVP_PKEY_derive_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            throw CryptoError(code: .openSSL, message: "ECDH setup failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        return context
    }

    /// Sets `peer` on a context from `makeDeriveContext()` and derives the 32-byte secret.
    static func derive(_ context: OpaquePointer, peer: EVPKey) throws(CryptoError) -> [UInt8] {
        // The peer was checked when it was built (P-256: on the curve, which has cofactor 1;
        // X25519: not of small order), so the full public check inside set_peer is skipped.
        guard EVP_PKEY_derive_set_peer_ex(context, peer.pointer, 0) == 1 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "ECDH setup failed; both keys must be on the same curve (P-256 or X25519)")
        }
        var length = 32
        var secret = [UInt8](repeating: 0, count: 32)
        // OpenSSL refuses an all-zero X25519 output (a small-order peer, RFC 7748 section 6.1).
        guard EVP_PKEY_derive(context, &secret, &length) == 1, length == 32 else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "ECDH derivation failed; the peer key is not usable (an X25519 key of small order?)")
        }
        return secret
    }

    /// Generates a fresh key pair on `curve` (pooled generation contexts).
    static func generate(_ curve: JWKCurve) throws(CryptoError) -> EVPKey {
        try KeyGenerationPool.shared(curve).generate()
    }

    /// Parses a DER SubjectPublicKeyInfo and checks it is a valid P-256 key.
    static func publicKey(subjectPublicKeyInfo der: [UInt8]) throws(CryptoError) -> EVPKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let parsed = d2i_PUBKEY(nil, &cursor, buffer.count) else { return nil }
            guard let cursor, cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                EVP_PKEY_free(parsed)
                return nil
            }
            return parsed
        }
        guard let key else {
            _ = OpenSSLAlgorithms.drainErrors()
            throw CryptoError(code: .invalidKey, message: "not a DER SubjectPublicKeyInfo; send the key as SPKI DER")
        }
        let owned = EVPKey(taking: key)
        try owned.checkPublicPoint()
        return owned
    }
}
