#if canImport(Glibc)
import Glibc
#endif

extension KafkaConsumer {
    /// Reads `topic` by manual assignment (no group joined, nothing committed) from the offset
    /// `start(low, high)` picks in each partition's watermarks to the end that partition had when the
    /// read began, calling `visit` with every record in between. Empty partitions are skipped.
    /// Throws `.timedOut` ("reading <topic> did not reach its end within N ms" + `timeoutHint`)
    /// when the ends are not all reached within `timeoutMs`.
    public func readToEnd(topic: String, timeoutMs: Int64, timeoutHint: String = "",
                          start: (_ low: Int64, _ high: Int64) -> Int64, visit: (KafkaMessage) -> Void) throws(KafkaError) {
        let count = try partitionCount(topic: topic, timeoutMs: 10_000)
        var ends: [Int32: Int64] = [:]
        var starts: [TopicPartitionOffset] = []
        for partition in 0..<Int32(count) {
            let marks = try watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 5_000)
            guard marks.high > marks.low else { continue }
            ends[partition] = marks.high
            starts.append(TopicPartitionOffset(topic: topic, partition: partition, offset: start(marks.low, marks.high), metadata: nil))
        }
        guard !starts.isEmpty else { return }
        try assign(starts)
        var next: [Int32: Int64] = Dictionary(uniqueKeysWithValues: starts.map { ($0.partition, $0.offset) })
        let deadline = Self.realtimeMs() + timeoutMs
        while next.contains(where: { $0.value < ends[$0.key]! }) {
            guard Self.realtimeMs() < deadline else {
                throw KafkaError(code: .timedOut, message: "reading \(topic) did not reach its end within \(timeoutMs) ms\(timeoutHint)")
            }
            for result in poll(maxMessages: 1_000, timeoutMs: 100) {
                guard case .success(let message) = result else { continue }
                next[message.partition] = max(next[message.partition] ?? 0, message.offset + 1)
                guard message.offset < ends[message.partition] ?? 0 else { continue }
                visit(message)
            }
        }
    }

    /// The record at `offset` of `topic`'s `partition`, or nil when the partition does not hold it
    /// (below its low watermark, at or past its end): one record read, nothing else kept.
    public func readOne(topic: String, partition: Int32, offset: Int64, timeoutMs: Int64) throws(KafkaError) -> KafkaMessage? {
        let marks = try watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 5_000)
        guard offset >= marks.low, offset < marks.high else { return nil }
        try assign([TopicPartitionOffset(topic: topic, partition: partition, offset: offset, metadata: nil)])
        let deadline = Self.realtimeMs() + timeoutMs
        while Self.realtimeMs() < deadline {
            for result in poll(maxMessages: 1, timeoutMs: 100) {
                guard case .success(let message) = result, message.partition == partition else { continue }
                // A compacted or deleted offset: the next record is not this one.
                return message.offset == offset ? message : nil
            }
        }
        throw KafkaError(code: .timedOut, message: "reading \(topic):\(partition):\(offset) took longer than \(timeoutMs) ms")
    }

    private static func realtimeMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
