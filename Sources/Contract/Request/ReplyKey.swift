/// The requesting backend's key for the result payload (`reply.jwk`), as sent: the validator checks
/// it is a P-256 point (`kty` `EC`) or an X25519 key not of small order (`kty` `OKP`) before
/// anything is encrypted to it.
public struct ReplyKey: Sendable, Hashable {
    /// `kty` as sent (`EC` or `OKP`).
    public var keyType: String
    /// `crv` as sent (`P-256` with `EC`, `X25519` with `OKP`).
    public var curve: String
    /// `x` as sent (base64url of 32 bytes).
    public var x: String
    /// `y` as sent (base64url of 32 bytes; only `EC` keys have one).
    public var y: String?
    /// `kid` as sent, if any (not interpreted).
    public var keyID: String?

    /// Creates a reply key from its JWK members.
    public init(keyType: String = "EC", curve: String = "P-256", x: String, y: String?, keyID: String? = nil) {
        self.keyType = keyType
        self.curve = curve
        self.x = x
        self.y = y
        self.keyID = keyID
    }

    /// Creates a reply key from a public P-256 JWK.
    public init(_ jwk: ECPublicJWK) {
        self.init(x: jwk.x, y: jwk.y)
    }

    /// Creates a reply key from a JWE recipient (either curve).
    public init(_ recipient: JWERecipient) {
        switch recipient {
        case .p256(let key): self.init(key)
        case .x25519(let key): self.init(keyType: "OKP", curve: "X25519", x: key.x, y: nil)
        }
    }

    /// The key as a checked JWE recipient (imported once per distinct key: `PublicKeyCache`).
    public func recipient() throws(CryptoError) -> JWERecipient {
        switch JWKCurve(keyType: keyType, curve: curve) {
        case .p256?:
            guard let y else { throw CryptoError(code: .invalidKey, message: "an EC reply.jwk needs y") }
            return .p256(try ECPublicJWK(x: x, y: y))
        case .x25519?:
            guard y == nil else { throw CryptoError(code: .invalidKey, message: "an OKP reply.jwk has no y") }
            return .x25519(try X25519PublicJWK(x: x))
        case nil:
            throw CryptoError(code: .invalidKey, message: "reply.jwk must be kty \"EC\" with crv \"P-256\", or kty \"OKP\" with crv \"X25519\"")
        }
    }
}
