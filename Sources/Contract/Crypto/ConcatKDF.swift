/// The single-step Concat KDF of NIST SP 800-56A section 5.8.1 with SHA-256, as JOSE ECDH-ES uses it
/// (RFC 7518 section 4.6.2).
public enum ConcatKDF {
    /// Derives `keyDataLengthBits / 8` bytes from the shared secret `Z`.
    ///
    /// OtherInfo = AlgorithmID ‖ PartyUInfo ‖ PartyVInfo ‖ SuppPubInfo, where the first three are
    /// length-prefixed (32-bit big-endian) and SuppPubInfo is the key length in bits (32-bit big-endian).
    public static func deriveKey(sharedSecret: [UInt8], algorithmID: String, partyUInfo: [UInt8] = [],
                                 partyVInfo: [UInt8] = [], keyDataLengthBits: Int) -> [UInt8] {
        let keyLength = keyDataLengthBits / 8
        let rounds = (keyLength + 31) / 32
        var algorithm = algorithmID
        return algorithm.withUTF8 { algorithm in
            // counter ‖ Z ‖ OtherInfo, built once in a temporary buffer; only the counter changes per round.
            let inputLength = 4 + sharedSecret.count + 4 + algorithm.count + 4 + partyUInfo.count + 4 + partyVInfo.count + 4
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: inputLength) { input in
                var at = 4
                func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                    if let base = bytes.baseAddress { (input.baseAddress! + at).update(from: base, count: bytes.count) }
                    at += bytes.count
                }
                func put(_ value: UInt32) {
                    withUnsafeBytes(of: value.bigEndian) { put($0.assumingMemoryBound(to: UInt8.self)) }
                }
                sharedSecret.withUnsafeBufferPointer { put($0) }
                put(UInt32(algorithm.count)); put(algorithm)
                put(UInt32(partyUInfo.count)); partyUInfo.withUnsafeBufferPointer { put($0) }
                put(UInt32(partyVInfo.count)); partyVInfo.withUnsafeBufferPointer { put($0) }
                put(UInt32(keyDataLengthBits))
                return [UInt8](unsafeUninitializedCapacity: rounds * 32) { output, count in
                    for round in 0..<rounds {
                        withUnsafeBytes(of: UInt32(round + 1).bigEndian) { counter in
                            UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(input)[0..<4]).copyMemory(from: counter)
                        }
                        Crypto.sha256(UnsafeRawBufferPointer(input), into: output.baseAddress! + 32 * round)
                    }
                    count = keyLength
                }
            }
        }
    }
}
