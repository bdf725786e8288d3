/// The public key a JWE is encrypted to (a request's `reply.jwk`): P-256 or X25519.
public enum JWERecipient: Sendable, Hashable {
    /// A P-256 key (`kty` `EC`).
    case p256(ECPublicJWK)
    /// An X25519 key (`kty` `OKP`).
    case x25519(X25519PublicJWK)

    /// The key's curve.
    public var curve: JWKCurve {
        switch self {
        case .p256: .p256
        case .x25519: .x25519
        }
    }

    /// The key as a public JWK object.
    public var jsonValue: JSONValue {
        switch self {
        case .p256(let key): key.jsonValue
        case .x25519(let key): key.jsonValue
        }
    }

    /// The RFC 7638 thumbprint, base64url without padding.
    public var thumbprint: String {
        switch self {
        case .p256(let key): key.thumbprint
        case .x25519(let key): key.thumbprint
        }
    }

    var key: EVPKey {
        switch self {
        case .p256(let key): key.key
        case .x25519(let key): key.key
        }
    }
}
