/// A P-256 public key as a JSON Web Key (RFC 7517/7518): `kty` `EC`, `crv` `P-256`, and the
/// coordinates as unpadded base64url of exactly 32 bytes each.
///
/// Every initializer checks that the point lies on the curve, and the parsed key is kept, so
/// encrypting to it costs no second parse; keys built from coordinates (reply keys) are also
/// remembered process-wide (`PublicKeyCache`), since one backend sends the same key with many
/// requests.
public struct ECPublicJWK: Sendable, Hashable {
    /// The x coordinate, base64url without padding.
    public let x: String
    /// The y coordinate, base64url without padding.
    public let y: String
    /// The uncompressed point `04 || x || y` (65 bytes).
    public let uncompressedPoint: [UInt8]
    let key: EVPKey

    /// Creates a key from its coordinates; checks the encoding and that the point lies on P-256.
    /// A key seen before (the same coordinates) is taken from the process-wide cache.
    public init(x: String, y: String) throws(CryptoError) {
        try self.init(x: x, y: y, cache: .shared)
    }

    /// Like `init(x:y:)`, through `cache` (nil: imported afresh and not kept, for one-off keys
    /// such as a JWE's ephemeral key).
    init(x: String, y: String, cache: PublicKeyCache?) throws(CryptoError) {
        let importing = { () throws(CryptoError) -> (key: EVPKey, raw: [UInt8]) in
            guard let xBytes = Crypto.base64URLDecode(x), xBytes.count == 32,
                  let yBytes = Crypto.base64URLDecode(y), yBytes.count == 32
            else {
                throw CryptoError(code: .invalidKey,
                                  message: "x and y must each be unpadded base64url of 32 bytes; send the P-256 coordinates")
            }
            let point = [0x04] + xBytes + yBytes
            return (try EVPKey.publicKey(uncompressedPoint: point), point)
        }
        if let cache {
            let entry = try cache.entry(PublicKeyCache.Members(curve: .p256, x: x, y: y), importing: importing)
            key = entry.key
            uncompressedPoint = entry.raw
        } else {
            (key, uncompressedPoint) = try importing()
        }
        self.x = x
        self.y = y
    }

    /// Creates a key from an uncompressed point (`04 || x || y`), checking it lies on P-256.
    public init(uncompressedPoint point: [UInt8]) throws(CryptoError) {
        key = try EVPKey.publicKey(uncompressedPoint: point)
        uncompressedPoint = point
        x = Crypto.base64URLEncode(Array(point[1..<33]))
        y = Crypto.base64URLEncode(Array(point[33..<65]))
    }

    init(trustedKey: EVPKey, point: [UInt8]) {
        key = trustedKey
        uncompressedPoint = point
        x = Crypto.base64URLEncode(Array(point[1..<33]))
        y = Crypto.base64URLEncode(Array(point[33..<65]))
    }

    /// Reads `{"kty":"EC","crv":"P-256","x":…,"y":…}`; other members are ignored.
    public init(jwk: JSONValue) throws(CryptoError) {
        try self.init(jwk: jwk, cache: .shared)
    }

    /// Like `init(jwk:)`, through `cache` (nil: not kept).
    init(jwk: JSONValue, cache: PublicKeyCache?) throws(CryptoError) {
        guard jwk["kty"]?.stringValue == "EC", jwk["crv"]?.stringValue == "P-256",
              let x = jwk["x"]?.stringValue, let y = jwk["y"]?.stringValue
        else {
            throw CryptoError(code: .invalidKey, message: "a JWK needs kty \"EC\", crv \"P-256\" and string x and y")
        }
        try self.init(x: x, y: y, cache: cache)
    }

    /// The key as a JWK object.
    public var jsonValue: JSONValue {
        .object(["kty": .string("EC"), "crv": .string("P-256"), "x": .string(x), "y": .string(y)])
    }

    /// The RFC 7638 thumbprint (SHA-256), base64url without padding.
    public var thumbprint: String {
        Crypto.base64URLEncode(JWKThumbprint.p256(x: x, y: y).bytes)
    }

    /// Equal when the coordinates are equal.
    public static func == (lhs: ECPublicJWK, rhs: ECPublicJWK) -> Bool {
        lhs.x == rhs.x && lhs.y == rhs.y
    }

    /// Hashes the coordinates.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(x)
        hasher.combine(y)
    }
}
