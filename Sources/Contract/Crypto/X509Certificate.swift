import COpenSSL

/// DER X.509 parsing helpers around OpenSSL's `d2i_X509`.
enum X509Certificate {
    /// Parses exactly one DER certificate filling the whole buffer; the caller frees it with `X509_free`.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> OpaquePointer? {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return nil }
        var cursor: UnsafePointer<UInt8>? = base
        guard let certificate = d2i_X509(nil, &cursor, buffer.count) else {
            _ = OpenSSLAlgorithms.drainErrors()
            return nil
        }
        guard cursor == base + buffer.count else {
            X509_free(certificate)
            return nil
        }
        return certificate
    }
}
