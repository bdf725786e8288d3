import Synchronization

/// Imported and checked reply keys (P-256 and X25519) by RFC 7638 thumbprint, so a backend's
/// reply key (the same for many requests) is decoded, imported and checked once, not once for
/// validation and again for every JWE. Bounded (FIFO: when full, the oldest import is forgotten);
/// holds public keys only. Thread-safe.
final class PublicKeyCache: Sendable {
    /// The process-wide cache of reply keys.
    static let shared = PublicKeyCache(capacity: 1024)

    /// One imported key, with the JWK members it was imported from.
    struct Entry: Sendable {
        /// The imported key.
        let key: EVPKey
        /// The public key as bytes: the uncompressed point (P-256) or the raw key (X25519).
        let raw: [UInt8]
        /// `x` as imported.
        let x: String
        /// `y` as imported (nil for X25519).
        let y: String?
    }

    private let entries: Mutex<BoundedCache<Digest256, Entry>>
    private let imports = Atomic<Int>(0)

    /// A cache of up to `capacity` keys.
    init(capacity: Int) {
        entries = Mutex(BoundedCache(capacity: capacity))
    }

    /// How many keys were imported (cache misses).
    var importCount: Int { imports.load(ordering: .relaxed) }

    /// How many keys are held.
    var count: Int { entries.withLock { $0.count } }

    /// The entry for the key with `thumbprint` and members `x`, `y`; on a miss (or a thumbprint
    /// whose entry has other members) `importing` decodes and checks the key, and it is kept.
    func entry(thumbprint: Digest256, x: String, y: String?,
               importing: () throws(CryptoError) -> (key: EVPKey, raw: [UInt8])) throws(CryptoError) -> Entry {
        if let cached = entries.withLock({ $0[thumbprint] }), cached.x == x, cached.y == y { return cached }
        let imported = try importing()
        imports.add(1, ordering: .relaxed)
        let entry = Entry(key: imported.key, raw: imported.raw, x: x, y: y)
        entries.withLock { $0.insert(entry, for: thumbprint) }
        return entry
    }
}
