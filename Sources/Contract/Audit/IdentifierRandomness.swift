import COpenSSL
import Synchronization

/// Random bytes for identifiers that are not secrets (audit event ids): OpenSSL's DRBG is asked
/// for 4 KiB at a time and handed out in slices, so an id costs a copy instead of a DRBG call with
/// its locks (four audit events per request). Never use it for keys, nonces or IVs: those come from
/// `Crypto.randomBytes`, straight from the DRBG. Thread-safe.
enum IdentifierRandomness {
    private static let pool = Mutex<(bytes: [UInt8], next: Int)>(([UInt8](repeating: 0, count: 4096), 4096))

    /// Lowercase hex of `count` (at most 4096) random bytes, made from the slice in place.
    static func hex(_ count: Int) -> String {
        precondition(count <= 4096, "identifier randomness comes in slices of at most 4096 bytes")
        return pool.withLock { pool in
            if pool.next + count > pool.bytes.count {
                let status = pool.bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
                precondition(status == 1, "RAND_bytes failed: \(OpenSSLAlgorithms.drainErrors())")
                pool.next = 0
            }
            defer { pool.next += count }
            return pool.bytes.withUnsafeBytes { Crypto.hex(UnsafeRawBufferPointer(rebasing: $0[pool.next..<(pool.next + count)])) }
        }
    }
}
