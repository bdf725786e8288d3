import COpenSSL
import Synchronization

/// HMAC-SHA256 contexts already initialised with a key, one per distinct key (the pseudonym key,
/// each program's request-signing and DCS secrets: a handful): an HMAC is then a re-initialisation
/// of a pooled copy, an update and a final, instead of a fetch of SHA-256 by name and two
/// key-block compressions (measured: a pooled copy re-initialised costs 2 allocations and about
/// 8,300 instructions per MAC, a fresh copy 11 and 11,800). Bounded (FIFO); holds key material
/// only inside OpenSSL contexts, never in logs. Thread-safe.
final class HMACKeyCache: Sendable {
    static let shared = HMACKeyCache(capacity: 64)

    /// Owns one initialised `EVP_MAC_CTX` and a pool of copies of it for use. `@unchecked
    /// Sendable` is safe: after initialisation the template is only read (`EVP_MAC_CTX_dup` copies
    /// it), it is freed in `deinit`, when no holder is left, and each pooled copy is used by one
    /// thread at a time.
    final class Template: @unchecked Sendable {
        let context: OpaquePointer
        /// Copies of `context`, re-initialised (same key) before each use.
        let contexts: ContextPool

        init(context: OpaquePointer) {
            self.context = context
            let template = Initialised(pointer: context)
            contexts = ContextPool(keep: 8, make: { EVP_MAC_CTX_dup(template.pointer) }, free: { EVP_MAC_CTX_free($0) })
        }

        /// The template captured by the pool's maker (only read, freed after the pool: see above).
        private struct Initialised: @unchecked Sendable {
            let pointer: OpaquePointer
        }

        deinit {
            EVP_MAC_CTX_free(context)
        }
    }

    private let entries: Mutex<BoundedCache<[UInt8], Template>>

    init(capacity: Int) {
        entries = Mutex(BoundedCache(capacity: capacity))
    }

    /// How many keys are held.
    var count: Int { entries.withLock { $0.count } }

    /// The initialised template for `key`, made on a miss; nil when OpenSSL refuses.
    func template(for key: [UInt8]) -> Template? {
        if let cached = entries.withLock({ $0[key] }) { return cached }
        guard let context = EVP_MAC_CTX_new(OpenSSLAlgorithms.shared.hmac) else { return nil }
        var digestName = Array("SHA256".utf8CString)
        let status: Int32 = digestName.withUnsafeMutableBufferPointer { name in
            var params = [
                OSSL_PARAM_construct_utf8_string(shim_OSSL_MAC_PARAM_DIGEST(), name.baseAddress, 0),
                OSSL_PARAM_construct_end(),
            ]
            // An empty key is legal for HMAC; OpenSSL wants a non-null pointer.
            let keyBytes = key.isEmpty ? [0] : key
            return keyBytes.withUnsafeBufferPointer { EVP_MAC_init(context, $0.baseAddress, key.count, &params) }
        }
        guard status == 1 else {
            EVP_MAC_CTX_free(context)
            return nil
        }
        let made = Template(context: context)
        entries.withLock { $0.insert(made, for: key) }
        return made
    }
}
