import COpenSSL

/// Private keys in PEM, for P-256 and X25519 alike.
extension EVPKey {
    /// Reads a PEM private key (`PRIVATE KEY`, or `EC PRIVATE KEY` for P-256); nil when it is not one.
    static func privateKey(pem: String) -> EVPKey? {
        let bytes = Array(pem.utf8)
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let parsed else {
            _ = OpenSSLAlgorithms.drainErrors()
            return nil
        }
        return EVPKey(taking: parsed)
    }

    /// The key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    func privatePEM() throws(CryptoError) -> Sensitive {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw CryptoError(code: .openSSL, message: "BIO_new failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError(code: .openSSL, message: "PEM encoding failed: \(OpenSSLAlgorithms.drainErrors())")
        }
        var data: UnsafeMutablePointer<CChar>?
        let length = shim_BIO_get_mem_data(bio, &data)
        guard length > 0, let data else {
            throw CryptoError(code: .openSSL, message: "PEM encoding produced no output")
        }
        return Sensitive(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self))
    }
}
