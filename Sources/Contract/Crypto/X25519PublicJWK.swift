/// An X25519 public key as a JSON Web Key (RFC 8037): `kty` `OKP`, `crv` `X25519`, and `x`, the
/// 32-byte key as unpadded base64url.
///
/// Every initializer checks the length and that the key is not of small order (a key whose shared
/// secret with anyone would be all zeros); keys built from `x` (reply keys) are remembered
/// process-wide (`PublicKeyCache`), like P-256 reply keys.
public struct X25519PublicJWK: Sendable, Hashable {
    /// The key, base64url without padding.
    public let x: String
    /// The key as bytes (32, RFC 7748's little-endian u-coordinate).
    public let rawKey: [UInt8]
    let key: EVPKey

    /// Creates a key from `x`; checks the encoding and the order. A key seen before (the same `x`)
    /// is taken from the process-wide cache.
    public init(x: String) throws(CryptoError) {
        try self.init(x: x, cache: .shared)
    }

    /// Like `init(x:)`, through `cache` (nil: imported afresh and not kept); `checkingOrder`
    /// false skips the small-order probe, for a key whose one use is a derivation (which fails on
    /// a small-order key anyway).
    init(x: String, cache: PublicKeyCache?, checkingOrder: Bool = true) throws(CryptoError) {
        let importing = { () throws(CryptoError) -> (key: EVPKey, raw: [UInt8]) in
            guard let raw = Crypto.base64URLDecode(x), raw.count == 32 else {
                throw CryptoError(code: .invalidKey, message: "x must be unpadded base64url of 32 bytes; send the X25519 public key")
            }
            return (try EVPKey.x25519PublicKey(raw: raw, checkingOrder: checkingOrder), raw)
        }
        if let cache {
            let entry = try cache.entry(PublicKeyCache.Members(curve: .x25519, x: x, y: nil), importing: importing)
            key = entry.key
            rawKey = entry.raw
        } else {
            (key, rawKey) = try importing()
        }
        self.x = x
    }

    init(trustedKey: EVPKey, raw: [UInt8]) {
        key = trustedKey
        rawKey = raw
        x = Crypto.base64URLEncode(raw)
    }

    /// Reads `{"kty":"OKP","crv":"X25519","x":…}`; other members are ignored.
    public init(jwk: JSONValue) throws(CryptoError) {
        try self.init(jwk: jwk, cache: .shared)
    }

    /// Like `init(jwk:)`, through `cache` (nil: not kept), probing the order unless `checkingOrder` is false.
    init(jwk: JSONValue, cache: PublicKeyCache?, checkingOrder: Bool = true) throws(CryptoError) {
        guard jwk["kty"]?.stringValue == "OKP", jwk["crv"]?.stringValue == "X25519", let x = jwk["x"]?.stringValue else {
            throw CryptoError(code: .invalidKey, message: "an X25519 JWK needs kty \"OKP\", crv \"X25519\" and a string x")
        }
        try self.init(x: x, cache: cache, checkingOrder: checkingOrder)
    }

    /// The key as a JWK object.
    public var jsonValue: JSONValue {
        .object(["kty": .string("OKP"), "crv": .string("X25519"), "x": .string(x)])
    }

    /// The RFC 7638 thumbprint (SHA-256), base64url without padding.
    public var thumbprint: String {
        Crypto.base64URLEncode(JWKThumbprint.x25519(x: x).bytes)
    }

    /// Equal when the keys are equal.
    public static func == (lhs: X25519PublicJWK, rhs: X25519PublicJWK) -> Bool {
        lhs.x == rhs.x
    }

    /// Hashes the key.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(x)
    }
}
