import COpenSSL
import Synchronization

/// HMAC-SHA256 contexts already initialised with a key, one per distinct key (the pseudonym key,
/// each program's request-signing and DCS secrets: a handful): an HMAC is then a context copy, an
/// update and a final, instead of a fetch of SHA-256 by name and two key-block compressions.
/// Bounded (FIFO); holds key material only inside OpenSSL contexts, never in logs. Thread-safe.
final class HMACKeyCache: Sendable {
    static let shared = HMACKeyCache(capacity: 64)

    /// Owns one initialised `EVP_MAC_CTX`. `@unchecked Sendable` is safe: after initialisation the
    /// context is only read (`EVP_MAC_CTX_dup` copies it), and it is freed in `deinit`, when no
    /// holder is left.
    final class Template: @unchecked Sendable {
        let context: OpaquePointer

        init(context: OpaquePointer) {
            self.context = context
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
