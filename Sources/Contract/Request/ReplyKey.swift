/// The requesting backend's key for the result payload (`reply.jwk`), as sent: the validator checks
/// it is a P-256 point before anything is encrypted to it.
public struct ReplyKey: Sendable, Hashable {
    /// `kty` as sent (must be `EC`).
    public var keyType: String
    /// `crv` as sent (must be `P-256`).
    public var curve: String
    /// `x` as sent (base64url of 32 bytes).
    public var x: String
    /// `y` as sent (base64url of 32 bytes).
    public var y: String
    /// `kid` as sent, if any (not interpreted).
    public var keyID: String?

    /// Creates a reply key from its JWK members.
    public init(keyType: String = "EC", curve: String = "P-256", x: String, y: String, keyID: String? = nil) {
        self.keyType = keyType
        self.curve = curve
        self.x = x
        self.y = y
        self.keyID = keyID
    }

    /// Creates a reply key from a public JWK.
    public init(_ jwk: ECPublicJWK) {
        self.init(x: jwk.x, y: jwk.y)
    }

    /// The key as a checked P-256 JWK, ready for `JWE.encrypt`.
    public func publicKey() throws(CryptoError) -> ECPublicJWK {
        guard keyType == "EC", curve == "P-256" else {
            throw CryptoError(code: .invalidKey, message: "reply.jwk must have kty \"EC\" and crv \"P-256\"")
        }
        return try ECPublicJWK(x: x, y: y)
    }
}
