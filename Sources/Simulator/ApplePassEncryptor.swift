import Contract
import Synchronization

/// Encrypts Apple pass data to leaf certificates (scheme at `ApplePassDecryptor`), cheaply.
///
/// A fresh ephemeral key costs a key generation and an ECDH (about 90 µs here), so each leaf keeps
/// its ephemeral key and derived AES key for `reuse` payloads; every payload still gets its own
/// random IV. Leaf certificates are parsed once and cached by digest. Thread-safe.
final class ApplePassEncryptor: Sendable {
    private struct Entry {
        var info: LeafCertificateInfo
        var ephemeralPoint: [UInt8] = []
        var key: [UInt8] = []
        var usesLeft = 0
    }

    private let leaves = Mutex(BoundedStore<DigestKey, Entry>(capacity: 8192))

    /// The leaf's details, from the cache or freshly read; nil when it is not a P-256 certificate.
    func inspect(leafDER: [UInt8]) -> LeafCertificateInfo? {
        let digest = Crypto.sha256(leafDER)
        let key = DigestKey(digest)
        if let entry = leaves.withLock({ $0[key] }) { return entry.info }
        guard let info = LeafCertificateInfo.read(der: leafDER, digest: digest) else { return nil }
        leaves.withLock { store in
            if store[key] == nil { store.set(Entry(info: info), for: key) }
        }
        return info
    }

    /// Encrypts `plaintext` to `leaf`; returns `encrypted_pass_data` bytes and the ephemeral point.
    func encrypt(_ plaintext: [UInt8], to leaf: LeafCertificateInfo, reuse: Int) throws(CryptoError)
        -> (sealed: [UInt8], ephemeralPoint: [UInt8]) {
        let cached: ([UInt8], [UInt8])? = leaves.withLock { store in
            guard var entry = store[leaf.digest], entry.usesLeft > 0 else { return nil }
            entry.usesLeft -= 1
            store.set(entry, for: leaf.digest)
            return (entry.ephemeralPoint, entry.key)
        }
        let point: [UInt8]
        let key: [UInt8]
        if let cached {
            (point, key) = cached
        } else {
            let ephemeral = try ECPrivateKey.generate()
            let sharedSecret = try Crypto.p256SharedSecret(privateKey: ephemeral, peerPublicKey: leaf.subjectPublicKeyInfo)
            point = try ephemeral.uncompressedPublicPoint()
            key = ApplePassDecryptor.symmetricKey(sharedSecret: sharedSecret, ephemeralPoint: point)
            leaves.withLock { store in
                store.set(Entry(info: leaf, ephemeralPoint: point, key: key, usesLeft: max(0, reuse - 1)), for: leaf.digest)
            }
        }
        let iv = Crypto.randomBytes(ApplePassDecryptor.ivLength)
        let (ciphertext, tag) = try Crypto.aes256GCMSeal(key: key, iv: iv, plaintext: plaintext, additionalData: [])
        var sealed = iv
        sealed.reserveCapacity(iv.count + ciphertext.count + tag.count)
        sealed.append(contentsOf: ciphertext)
        sealed.append(contentsOf: tag)
        return (sealed, point)
    }
}
