import COpenSSL
import Contract

/// What the simulator needs from a PassKit leaf certificate, read once and cached by its digest.
struct LeafCertificateInfo: Sendable {
    /// SHA-256 of the DER, as a table key.
    let digest: DigestKey
    /// SHA-256 hex of the DER: the Imprint `device_ref` of an Apple token.
    let deviceRef: String
    /// The DER SubjectPublicKeyInfo (a P-256 key).
    let subjectPublicKeyInfo: [UInt8]
    /// The subject common name (a `SimulatedDevice` puts its name there; `-ineligible` is honoured).
    let commonName: String

    /// Reads a DER certificate; nil when it does not parse or its key is not a 256-bit EC key.
    static func read(der: [UInt8], digest: [UInt8]) -> LeafCertificateInfo? {
        let parsed: (String, Bool)? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else {
                _ = drainOpenSSLErrors()
                return nil
            }
            defer { X509_free(certificate) }
            guard cursor == base + buffer.count, let key = X509_get0_pubkey(certificate) else { return nil }
            let isP256 = EVP_PKEY_get_base_id(key) == EVP_PKEY_EC && EVP_PKEY_get_bits(key) == 256
            return (commonName(of: certificate), isP256)
        }
        guard let (commonName, isP256) = parsed, isP256,
              let spki = try? Crypto.certificatePublicKey(der: der)
        else { return nil }
        return LeafCertificateInfo(digest: DigestKey(digest), deviceRef: Crypto.hex(digest), subjectPublicKeyInfo: spki,
                                   commonName: commonName)
    }

    private static func commonName(of certificate: OpaquePointer) -> String {
        guard let name = X509_get_subject_name(certificate) else { return "" }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry),
              let bytes = ASN1_STRING_get0_data(data)
        else { return "" }
        let length = Int(ASN1_STRING_length(data))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
    }
}
