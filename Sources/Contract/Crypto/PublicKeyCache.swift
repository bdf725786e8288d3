import Synchronization

/// Imported and checked reply keys (P-256 and X25519) by their JWK members, so a backend's reply
/// key (the same for many requests) is decoded, imported and checked once, not once for
/// validation and again for every JWE. Bounded (FIFO: when full, the oldest import is forgotten);
/// holds public keys only. Thread-safe.
///
/// The members (curve, `x`, `y`) are the key's identity: strict base64url has one text per key, so
/// two requests name the same key exactly when they send the same members, which is also when
/// their RFC 7638 thumbprints agree. The thumbprint itself is not the lookup key: computing it is
/// a SHA-256 of about 120 bytes per lookup (measured: 13,000 instructions per request for the two
/// lookups, validation and sealing), where hashing the members costs a few hundred.
final class PublicKeyCache: Sendable {
    /// The process-wide cache of reply keys.
    static let shared = PublicKeyCache(capacity: 1024)

    /// What identifies a key: its curve and coordinates as sent.
    struct Members: Hashable, Sendable {
        /// The curve (`kty` and `crv`).
        let curve: JWKCurve
        /// `x` as sent.
        let x: String
        /// `y` as sent (nil for X25519).
        let y: String?
    }

    /// One imported key.
    struct Entry: Sendable {
        /// The imported key.
        let key: EVPKey
        /// The public key as bytes: the uncompressed point (P-256) or the raw key (X25519).
        let raw: [UInt8]
    }

    private let entries: Mutex<BoundedCache<Members, Entry>>
    private let imports = Atomic<Int>(0)

    /// A cache of up to `capacity` keys.
    init(capacity: Int) {
        entries = Mutex(BoundedCache(capacity: capacity))
    }

    /// How many keys were imported (cache misses).
    var importCount: Int { imports.load(ordering: .relaxed) }

    /// How many keys are held.
    var count: Int { entries.withLock { $0.count } }

    /// The entry for the key with `members`; on a miss `importing` decodes and checks the key,
    /// and it is kept (a key that fails its checks is not).
    func entry(_ members: Members, importing: () throws(CryptoError) -> (key: EVPKey, raw: [UInt8])) throws(CryptoError) -> Entry {
        if let cached = entries.withLock({ $0[members] }) { return cached }
        let imported = try importing()
        imports.add(1, ordering: .relaxed)
        let entry = Entry(key: imported.key, raw: imported.raw)
        entries.withLock { $0.insert(entry, for: members) }
        return entry
    }
}
