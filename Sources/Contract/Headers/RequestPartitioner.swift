/// The partitioner the contract names for signed requests: Kafka's murmur2 of the record key,
/// made positive and taken modulo the topic's partition count — what the Java client's default
/// partitioner and librdkafka's `murmur2` / `murmur2_random` do for a keyed record. A signing
/// producer picks the partition with it and signs that partition (signature v3), so its own
/// retries of a request (same card id, same key) land on the same partition and meet the
/// worker's duplicate filter there.
public enum RequestPartitioner {
    /// Kafka's murmur2 (seed `0x9747b28c`), as Java's `Utils.murmur2` and librdkafka's `rd_murmur2`.
    public static func murmur2(_ data: [UInt8]) -> Int32 {
        let m: UInt32 = 0x5bd1_e995
        let length = data.count
        var h: UInt32 = 0x9747_b28c ^ UInt32(truncatingIfNeeded: length)
        var index = 0
        while index + 4 <= length {
            var k = UInt32(data[index]) | UInt32(data[index + 1]) << 8 | UInt32(data[index + 2]) << 16 | UInt32(data[index + 3]) << 24
            k = k &* m
            k ^= k >> 24
            k = k &* m
            h = h &* m
            h ^= k
            index += 4
        }
        let tail = length - index
        if tail == 3 { h ^= UInt32(data[index + 2]) << 16 }
        if tail >= 2 { h ^= UInt32(data[index + 1]) << 8 }
        if tail >= 1 {
            h ^= UInt32(data[index])
            h = h &* m
        }
        h ^= h >> 13
        h = h &* m
        h ^= h >> 15
        return Int32(bitPattern: h)
    }

    /// The partition of a record with `key` on a topic of `count` partitions (`count` ≥ 1):
    /// `(murmur2(key) & 0x7fffffff) % count`. A record without a key has no partition of its own:
    /// any one is chosen at random (librdkafka's `murmur2_random`).
    public static func partition(key: [UInt8]?, count: Int) -> Int32 {
        precondition(count >= 1, "a topic has at least one partition")
        guard let key else { return Int32(Int.random(in: 0..<count)) }
        return Int32((Int(murmur2(key)) & 0x7fff_ffff) % count)
    }
}
