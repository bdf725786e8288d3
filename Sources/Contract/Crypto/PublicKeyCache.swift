import Synchronization

/// Parsed and checked P-256 public keys by coordinates, so a backend's reply key (the same for many
/// requests) is parsed once, not once for validation and again for every JWE. Bounded (FIFO);
/// holds public keys only. Thread-safe.
final class PublicKeyCache: Sendable {
    static let shared = PublicKeyCache(capacity: 1024)

    private let entries: Mutex<BoundedCache<String, EVPKey>>

    init(capacity: Int) {
        entries = Mutex(BoundedCache(capacity: capacity))
    }

    /// The checked key for the point, parsing it on a miss.
    func key(for point: [UInt8], cacheKey: String) throws(CryptoError) -> EVPKey {
        if let cached = entries.withLock({ $0[cacheKey] }) { return cached }
        let key = try EVPKey.publicKey(uncompressedPoint: point)
        entries.withLock { $0.insert(key, for: cacheKey) }
        return key
    }
}
