/// An X25519 private key (RFC 7748): generated, or read from PKCS#8 PEM or from a private `OKP`
/// JWK (RFC 8037). A backend that asks for X25519 reply keys decrypts its payloads with it.
///
/// Prints as `<redacted>`; the PEM and JWK forms are returned as `Sensitive`.
public struct X25519PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: EVPKey

    init(key: EVPKey) {
        self.key = key
    }

    /// Generates a fresh key.
    public static func generate() throws(CryptoError) -> X25519PrivateKey {
        X25519PrivateKey(key: try EVPKey.generate(.x25519))
    }

    /// Reads a PKCS#8 PEM private key (`PRIVATE KEY`) holding an X25519 key.
    public init(pem: String) throws(CryptoError) {
        guard let parsed = EVPKey.privateKey(pem: pem) else {
            throw CryptoError(code: .invalidKey, message: "not a PEM private key; send an unencrypted PKCS#8 X25519 key")
        }
        guard parsed.isX25519 else {
            throw CryptoError(code: .invalidKey, message: "the PEM key is not an X25519 key; use an X25519 key")
        }
        key = parsed
    }

    /// Reads a private JWK `{"kty":"OKP","crv":"X25519","x","d"}`; `x` must be the public half of `d`.
    public init(jwk: JSONValue) throws(CryptoError) {
        let publicKey = try X25519PublicJWK(jwk: jwk, cache: nil)
        guard let d = jwk["d"]?.stringValue, let scalar = Crypto.base64URLDecode(d), scalar.count == 32 else {
            throw CryptoError(code: .invalidKey, message: "a private X25519 JWK needs d as unpadded base64url of 32 bytes")
        }
        let parsed = try EVPKey.x25519PrivateKey(raw: scalar)
        guard try parsed.rawPublicKey() == publicKey.rawKey else {
            throw CryptoError(code: .invalidKey, message: "the private key d does not match the public key x; send a consistent key")
        }
        key = parsed
    }

    /// The public half as a JWK.
    public var publicKey: X25519PublicJWK {
        get throws(CryptoError) {
            X25519PublicJWK(trustedKey: key, raw: try key.rawPublicKey())
        }
    }

    /// The key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public func pemRepresentation() throws(CryptoError) -> Sensitive {
        try key.privatePEM()
    }

    /// The key as a private JWK (JSON text with `d`).
    public func jwkRepresentation() throws(CryptoError) -> Sensitive {
        var members = try publicKey.jsonValue.objectValue ?? [:]
        members["d"] = .string(Crypto.base64URLEncode(try key.rawPrivateKey()))
        return Sensitive(String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self))
    }

    /// Always `<redacted>`.
    public var description: String { Sensitive.placeholder }
    /// Always `<redacted>`.
    public var debugDescription: String { Sensitive.placeholder }
    /// A mirror without children.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: nil) }
}
