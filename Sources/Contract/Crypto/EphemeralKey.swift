import COpenSSL
import Synchronization

/// One ephemeral key for one JWE, prepared ahead of the request that uses it (`EphemeralKeyPool`):
/// the key pair, a derive context already initialised with it, and the JWE's protected header
/// naming its public half, base64url-encoded. What is left for the request is the agreement with
/// the recipient's key.
///
/// ECDH-ES needs a fresh key per message: `agree(with:)` succeeds once, and any later call throws.
/// The private key lives only inside OpenSSL and is freed (and cleansed by OpenSSL) with this
/// object. `@unchecked Sendable` is safe: the context is used by whoever holds the object, which
/// the pool hands to one taker only, and the `used` flag makes a second use fail.
final class EphemeralKey: @unchecked Sendable {
    /// The curve of the key.
    let curve: JWKCurve
    /// `{"alg":"ECDH-ES","enc":"A256GCM","epk":{…}}` (sorted keys, the `JSONWriter` form),
    /// base64url: the compact JWE's first part and its AAD.
    let encodedHeader: [UInt8]
    private let key: EVPKey
    private let context: OpaquePointer
    private let used = Atomic<Bool>(false)

    /// Generates a key on `curve` and prepares it.
    init(curve: JWKCurve) throws(CryptoError) {
        self.curve = curve
        key = try EVPKey.generate(curve)
        var header = JSONWriter(capacity: 160)
        header.beginObject()
        header.key("alg"); header.string("ECDH-ES")
        header.key("enc"); header.string("A256GCM")
        header.key("epk")
        header.beginObject()
        header.key("crv"); header.string(curve.rawValue)
        header.key("kty"); header.string(curve.keyType)
        switch curve {
        case .p256:
            let point = try key.uncompressedPoint()
            header.key("x"); header.string(Base64.encode(point[1..<33], url: true))
            header.key("y"); header.string(Base64.encode(point[33..<65], url: true))
        case .x25519:
            header.key("x"); header.string(Base64.encode(try key.rawPublicKey(), url: true))
        }
        header.endObject()
        header.endObject()
        var encoded = [UInt8]()
        encoded.reserveCapacity((header.bytes.count + 2) / 3 * 4)
        Base64.append(header.bytes, url: true, to: &encoded)
        encodedHeader = encoded
        context = try key.makeDeriveContext()
    }

    deinit {
        EVP_PKEY_CTX_free(context)
    }

    /// The 32-byte ECDH secret with `peer` (on the same curve). Throws on a second call: an
    /// ephemeral key serves one message.
    func agree(with peer: EVPKey) throws(CryptoError) -> [UInt8] {
        guard !used.exchange(true, ordering: .acquiringAndReleasing) else {
            throw CryptoError(code: .invalidInput, message: "an ephemeral key was used twice; ECDH-ES needs a fresh key per message")
        }
        return try EVPKey.derive(context, peer: peer)
    }
}
