import COpenSSL
import Synchronization

/// Checks PassKit certificate chains (leaf, intermediate) with OpenSSL and remembers the verdicts.
///
/// Verdicts are cached by SHA-256 over both DER encodings (length-prefixed, so no two chains share
/// a key); the cache is bounded and forgets its oldest entry when full. Thread-safe.
public final class CertificateChainVerifier: Sendable {
    private let cache: Mutex<BoundedCache<Digest256, ChainVerdict>>

    /// Creates a verifier remembering up to `capacity` verdicts.
    public init(capacity: Int = 4096) {
        cache = Mutex(BoundedCache(capacity: capacity))
    }

    /// How many verdicts are cached.
    public var cachedCount: Int { cache.withLock { $0.count } }

    /// Verifies a chain given as DER bytes.
    public func verify(leaf: [UInt8], intermediate: [UInt8]) -> ChainVerdict {
        var keyInput = [UInt8]()
        keyInput.reserveCapacity(8 + leaf.count + intermediate.count)
        let length = UInt64(leaf.count)
        for shift in stride(from: 56, through: 0, by: -8) { keyInput.append(UInt8(length >> UInt64(shift) & 0xFF)) }
        keyInput.append(contentsOf: leaf)
        keyInput.append(contentsOf: intermediate)
        let key = Digest256(Crypto.sha256(keyInput))
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let verdict = Self.check(leaf: leaf, intermediate: intermediate)
        cache.withLock { $0.insert(verdict, for: key) }
        return verdict
    }

    private static func check(leaf: [UInt8], intermediate: [UInt8]) -> ChainVerdict {
        leaf.withUnsafeBufferPointer { leafBuffer in
            intermediate.withUnsafeBufferPointer { intermediateBuffer in
                guard let leafCertificate = X509Certificate.parse(leafBuffer) else {
                    return .invalid(field: "apple.certificates[0]",
                                    message: "apple.certificates[0] is not a DER X.509 certificate; send the leaf certificate PassKit supplied, base64-encoded")
                }
                defer { X509_free(leafCertificate) }
                guard let intermediateCertificate = X509Certificate.parse(intermediateBuffer) else {
                    return .invalid(field: "apple.certificates[1]",
                                    message: "apple.certificates[1] is not a DER X.509 certificate; send the intermediate certificate PassKit supplied, base64-encoded")
                }
                defer { X509_free(intermediateCertificate) }
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
    }
}
