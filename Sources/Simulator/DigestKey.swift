/// A SHA-256 digest as four words: a compact, hashable key for nonce and certificate tables.
struct DigestKey: Hashable, Sendable {
    let a: UInt64
    let b: UInt64
    let c: UInt64
    let d: UInt64

    /// Reads the first 32 bytes of `digest` (a SHA-256 output).
    init(_ digest: [UInt8]) {
        precondition(digest.count >= 32, "a SHA-256 digest has 32 bytes")
        func word(_ offset: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in offset..<(offset + 8) { value = value << 8 | UInt64(digest[index]) }
            return value
        }
        a = word(0)
        b = word(8)
        c = word(16)
        d = word(24)
    }
}
