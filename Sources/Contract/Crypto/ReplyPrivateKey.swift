/// A requester's private reply key, which decrypts result payloads: P-256 (the default) or X25519.
/// Its public half goes into each request's `reply.jwk`.
///
/// Prints as `<redacted>`.
public enum ReplyPrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A P-256 key.
    case p256(ECPrivateKey)
    /// An X25519 key.
    case x25519(X25519PrivateKey)

    /// Generates a fresh key on `curve`.
    public static func generate(_ curve: JWKCurve = .p256) throws(CryptoError) -> ReplyPrivateKey {
        switch curve {
        case .p256: .p256(try ECPrivateKey.generate())
        case .x25519: .x25519(try X25519PrivateKey.generate())
        }
    }

    /// Reads a PEM private key on either curve (PKCS#8, or SEC 1 for P-256).
    public init(pem: String) throws(CryptoError) {
        guard let parsed = EVPKey.privateKey(pem: pem) else {
            throw CryptoError(code: .invalidKey, message: "not a PEM private key; send an unencrypted PKCS#8 P-256 or X25519 key")
        }
        self = parsed.isX25519 ? .x25519(try X25519PrivateKey(pem: pem)) : .p256(try ECPrivateKey(pem: pem))
    }

    /// The key's curve.
    public var curve: JWKCurve {
        switch self {
        case .p256: .p256
        case .x25519: .x25519
        }
    }

    /// The public half, as a JWE recipient (and `reply.jwk`).
    public var recipient: JWERecipient {
        get throws(CryptoError) {
            switch self {
            case .p256(let key): .p256(try key.publicKey)
            case .x25519(let key): .x25519(try key.publicKey)
            }
        }
    }

    /// The key as PKCS#8 PEM.
    public func pemRepresentation() throws(CryptoError) -> Sensitive {
        switch self {
        case .p256(let key): try key.pemRepresentation()
        case .x25519(let key): try key.pemRepresentation()
        }
    }

    var key: EVPKey {
        switch self {
        case .p256(let key): key.key
        case .x25519(let key): key.key
        }
    }

    /// Always `<redacted>`.
    public var description: String { Sensitive.placeholder }
    /// Always `<redacted>`.
    public var debugDescription: String { Sensitive.placeholder }
    /// A mirror without children.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: nil) }
}
