/// The single-step Concat KDF of NIST SP 800-56A section 5.8.1 with SHA-256, as JOSE ECDH-ES uses it
/// (RFC 7518 section 4.6.2).
public enum ConcatKDF {
    /// Derives `keyDataLengthBits / 8` bytes from the shared secret `Z`.
    ///
    /// OtherInfo = AlgorithmID ‖ PartyUInfo ‖ PartyVInfo ‖ SuppPubInfo, where the first three are
    /// length-prefixed (32-bit big-endian) and SuppPubInfo is the key length in bits (32-bit big-endian).
    public static func deriveKey(sharedSecret: [UInt8], algorithmID: String, partyUInfo: [UInt8] = [],
                                 partyVInfo: [UInt8] = [], keyDataLengthBits: Int) -> [UInt8] {
        var otherInfo = [UInt8]()
        appendLengthPrefixed(Array(algorithmID.utf8), to: &otherInfo)
        appendLengthPrefixed(partyUInfo, to: &otherInfo)
        appendLengthPrefixed(partyVInfo, to: &otherInfo)
        appendUInt32(UInt32(keyDataLengthBits), to: &otherInfo)
        let keyLength = keyDataLengthBits / 8
        var output = [UInt8]()
        var counter: UInt32 = 1
        while output.count < keyLength {
            var input = [UInt8]()
            input.reserveCapacity(4 + sharedSecret.count + otherInfo.count)
            appendUInt32(counter, to: &input)
            input.append(contentsOf: sharedSecret)
            input.append(contentsOf: otherInfo)
            output.append(contentsOf: Crypto.sha256(input))
            counter += 1
        }
        return Array(output.prefix(keyLength))
    }

    private static func appendLengthPrefixed(_ bytes: [UInt8], to output: inout [UInt8]) {
        appendUInt32(UInt32(bytes.count), to: &output)
        output.append(contentsOf: bytes)
    }

    private static func appendUInt32(_ value: UInt32, to output: inout [UInt8]) {
        output.append(UInt8(value >> 24 & 0xFF))
        output.append(UInt8(value >> 16 & 0xFF))
        output.append(UInt8(value >> 8 & 0xFF))
        output.append(UInt8(value & 0xFF))
    }
}
