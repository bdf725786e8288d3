/// A SHA-256 digest as four words: a compact, hashable dictionary key.
struct Digest256: Hashable, Sendable {
    let words: (UInt64, UInt64, UInt64, UInt64)

    init(_ digest: [UInt8]) {
        precondition(digest.count == 32, "a SHA-256 digest has 32 bytes")
        // The words are read inside the closure: the pointer is valid only there.
        self = digest.withUnsafeBytes { Digest256($0) }
    }

    private init(_ digest: UnsafeRawBufferPointer) {
        func word(_ offset: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in offset..<(offset + 8) { value = value << 8 | UInt64(digest[index]) }
            return value
        }
        words = (word(0), word(8), word(16), word(24))
    }

    /// SHA-256 of raw memory, computed without a heap allocation of its own.
    static func sha256(_ bytes: UnsafeRawBufferPointer) -> Digest256 {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { output in
            Crypto.sha256(bytes, into: output.baseAddress!)
            return Digest256(UnsafeRawBufferPointer(output))
        }
    }

    /// The 32 bytes, big-endian words in order.
    var bytes: [UInt8] {
        var output = [UInt8]()
        output.reserveCapacity(32)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 56, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return output
    }

    static func == (lhs: Digest256, rhs: Digest256) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2 && lhs.words.3 == rhs.words.3
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
