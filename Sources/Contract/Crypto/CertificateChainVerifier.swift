import COpenSSL
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Checks PassKit certificate chains (leaf, intermediate) with OpenSSL and remembers the verdicts.
///
/// Verdicts are cached by SHA-256 over both DER encodings (length-prefixed, so no two chains share
/// a key); the cache is bounded and forgets its oldest entry when full. PassKit's chains are
/// Apple's and recur across requests, so most requests find their chain here. Each entry keeps the
/// chain's validity window (the later `notBefore`, the earlier `notAfter` of the two certificates):
/// a cached verdict is only used inside it, and outside it the chain is checked again, so a cache
/// never carries a verdict past a certificate's lifetime. Thread-safe.
public final class CertificateChainVerifier: Sendable {
    /// A verdict and the window (Unix seconds) in which it may be reused.
    struct Entry {
        var verdict: ChainVerdict
        var notBefore: Int64
        var notAfter: Int64
    }

    private let cache: Mutex<BoundedCache<Digest256, Entry>>
    private let checks = Atomic<Int>(0)

    /// Creates a verifier remembering up to `capacity` verdicts.
    public init(capacity: Int = 4096) {
        cache = Mutex(BoundedCache(capacity: capacity))
    }

    /// How many chains were checked with OpenSSL (cache misses and rechecks outside a window).
    public var checksPerformed: Int { checks.load(ordering: .relaxed) }

    /// How many verdicts are cached.
    public var cachedCount: Int { cache.withLock { $0.count } }

    /// Verifies a chain given as DER bytes; `nowSeconds` (Unix time, default now) decides whether a
    /// cached verdict is still inside the chain's validity window.
    public func verify(leaf: [UInt8], intermediate: [UInt8], nowSeconds: Int64 = Int64(time(nil))) -> ChainVerdict {
        var keyInput = [UInt8]()
        keyInput.reserveCapacity(8 + leaf.count + intermediate.count)
        let length = UInt64(leaf.count)
        for shift in stride(from: 56, through: 0, by: -8) { keyInput.append(UInt8(length >> UInt64(shift) & 0xFF)) }
        keyInput.append(contentsOf: leaf)
        keyInput.append(contentsOf: intermediate)
        let key = Digest256(Crypto.sha256(keyInput))
        if let cached = cache.withLock({ $0[key] }), cached.notBefore <= nowSeconds, nowSeconds <= cached.notAfter {
            return cached.verdict
        }
        checks.add(1, ordering: .relaxed)
        let entry = Self.check(leaf: leaf, intermediate: intermediate)
        cache.withLock { $0.insert(entry, for: key) }
        return entry.verdict
    }

    /// Unix seconds of an ASN.1 time, or nil when it does not convert.
    private static func seconds(_ value: UnsafePointer<ASN1_TIME>?) -> Int64? {
        var parts = tm()
        guard let value, ASN1_TIME_to_tm(value, &parts) == 1 else { return nil }
        return Int64(timegm(&parts))
    }

    private static func check(leaf: [UInt8], intermediate: [UInt8]) -> Entry {
        let always = { (verdict: ChainVerdict) in Entry(verdict: verdict, notBefore: .min, notAfter: .max) }
        return leaf.withUnsafeBufferPointer { leafBuffer in
            intermediate.withUnsafeBufferPointer { intermediateBuffer in
                guard let leafCertificate = X509Certificate.parse(leafBuffer) else {
                    return always(Self.verdict(leaf: nil, intermediate: nil))
                }
                defer { X509_free(leafCertificate) }
                guard let intermediateCertificate = X509Certificate.parse(intermediateBuffer) else {
                    return always(Self.verdict(leaf: leafCertificate, intermediate: nil))
                }
                defer { X509_free(intermediateCertificate) }
                let verdict = Self.verdict(leaf: leafCertificate, intermediate: intermediateCertificate)
                let starts = [X509_get0_notBefore(leafCertificate), X509_get0_notBefore(intermediateCertificate)].map { seconds($0) }
                let ends = [X509_get0_notAfter(leafCertificate), X509_get0_notAfter(intermediateCertificate)].map { seconds($0) }
                // A window that does not read is not cached at all (empty window: checked every time).
                guard let start = starts.compactMap({ $0 }).max(), let end = ends.compactMap({ $0 }).min(),
                      !starts.contains(nil), !ends.contains(nil)
                else { return Entry(verdict: verdict, notBefore: .max, notAfter: .min) }
                return Entry(verdict: verdict, notBefore: start, notAfter: end)
            }
        }
    }

    private static func verdict(leaf leafCertificate: OpaquePointer?, intermediate intermediateCertificate: OpaquePointer?) -> ChainVerdict {
        guard let leafCertificate else {
            _ = OpenSSLAlgorithms.drainErrors()
            return .invalid(field: "apple.certificates[0]",
                            message: "apple.certificates[0] is not a DER X.509 certificate; send the leaf certificate PassKit supplied, base64-encoded")
        }
        guard let intermediateCertificate else {
            _ = OpenSSLAlgorithms.drainErrors()
            return .invalid(field: "apple.certificates[1]",
                            message: "apple.certificates[1] is not a DER X.509 certificate; send the intermediate certificate PassKit supplied, base64-encoded")
        }
        defer { _ = OpenSSLAlgorithms.drainErrors() }
        if X509_self_signed(intermediateCertificate, 0) == 1 {
            return .invalid(field: "apple.certificates[1]",
                            message: "apple.certificates[1] is self-signed (a root); send the leaf and the intermediate PassKit supplied, without a root")
        }
        guard X509_check_issued(intermediateCertificate, leafCertificate) == X509_V_OK else {
            return .invalid(field: "apple.certificates",
                            message: "apple.certificates[0] was not issued by apple.certificates[1]; send the chain in PassKit's order, leaf first")
        }
        guard let issuerKey = X509_get0_pubkey(intermediateCertificate),
              X509_verify(leafCertificate, issuerKey) == 1
        else {
            return .invalid(field: "apple.certificates[0]",
                            message: "apple.certificates[0] carries no valid signature by apple.certificates[1]; send the certificates unmodified")
        }
        return .valid
    }
}
