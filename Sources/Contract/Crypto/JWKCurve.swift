/// The curves a reply key (`reply.jwk`) may use for ECDH-ES: P-256 (RFC 7518, `kty` `EC`; the
/// default) or X25519 (RFC 8037, `kty` `OKP`).
public enum JWKCurve: String, Sendable, Hashable, CaseIterable {
    /// NIST P-256 (`"crv": "P-256"`, `"kty": "EC"`).
    case p256 = "P-256"
    /// Curve25519's Diffie-Hellman function (`"crv": "X25519"`, `"kty": "OKP"`, RFC 7748).
    case x25519 = "X25519"

    /// The JWK `kty` of keys on this curve.
    public var keyType: String {
        switch self {
        case .p256: "EC"
        case .x25519: "OKP"
        }
    }

    /// The curve a JWK names by `kty` and `crv`, or nil for any other pair.
    public init?(keyType: String, curve: String) {
        switch (keyType, curve) {
        case ("EC", "P-256"): self = .p256
        case ("OKP", "X25519"): self = .x25519
        default: return nil
        }
    }

    /// OpenSSL's key type name for `EVP_PKEY_CTX_new_from_name`.
    var openSSLName: String {
        switch self {
        case .p256: "EC"
        case .x25519: "X25519"
        }
    }
}
