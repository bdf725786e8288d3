import COpenSSL

/// A P-256 private key: generated, or read from PEM (PKCS#8 or SEC 1) or from a private JWK.
///
/// Prints as `<redacted>`; the PEM and JWK forms are returned as `Sensitive`.
public struct ECPrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: EVPKey

    init(key: EVPKey) {
        self.key = key
    }

    /// Generates a fresh key.
    public static func generate() throws(CryptoError) -> ECPrivateKey {
        ECPrivateKey(key: try EVPKey.generate(.p256))
    }

    /// Reads a PEM private key (`PRIVATE KEY` or `EC PRIVATE KEY`) on P-256.
    public init(pem: String) throws(CryptoError) {
        guard let parsed = EVPKey.privateKey(pem: pem) else {
            throw CryptoError(code: .invalidKey, message: "not a PEM private key; send an unencrypted PKCS#8 or SEC 1 P-256 key")
        }
        try parsed.checkPublicPoint()
        _ = try parsed.privateScalar()
        key = parsed
    }

    /// Reads a private JWK `{"kty":"EC","crv":"P-256","x","y","d"}`.
    public init(jwk: JSONValue) throws(CryptoError) {
        let publicKey = try ECPublicJWK(jwk: jwk, cache: nil)
        guard let d = jwk["d"]?.stringValue, let scalar = Crypto.base64URLDecode(d), scalar.count == 32 else {
            throw CryptoError(code: .invalidKey, message: "a private JWK needs d as unpadded base64url of 32 bytes")
        }
        key = try EVPKey.keyPair(privateScalar: scalar, uncompressedPoint: publicKey.uncompressedPoint)
    }

    /// The public half as a JWK.
    public var publicKey: ECPublicJWK {
        get throws(CryptoError) {
            ECPublicJWK(trustedKey: key, point: try key.uncompressedPoint())
        }
    }

    /// The public point, uncompressed (65 bytes).
    public func uncompressedPublicPoint() throws(CryptoError) -> [UInt8] {
        try key.uncompressedPoint()
    }

    /// The key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public func pemRepresentation() throws(CryptoError) -> Sensitive {
        try key.privatePEM()
    }

    /// The key as a private JWK (JSON text with `d`).
    public func jwkRepresentation() throws(CryptoError) -> Sensitive {
        let publicKey = try self.publicKey
        let scalar = try key.privateScalar()
        var members = publicKey.jsonValue.objectValue ?? [:]
        members["d"] = .string(Crypto.base64URLEncode(scalar))
        return Sensitive(String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self))
    }

    /// Always `<redacted>`.
    public var description: String { Sensitive.placeholder }
    /// Always `<redacted>`.
    public var debugDescription: String { Sensitive.placeholder }
    /// A mirror without children.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: nil) }
}
