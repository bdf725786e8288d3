import Kafka

/// One lag measurement of the requests partitions received so far: each one's lag (high
/// watermark minus committed offset, as Kafka's tools and lag-based autoscalers count it) and the
/// fetch watchdog's sample of it.
struct LagRound {
    /// Lag per partition measured.
    private(set) var lag: [TopicPartition: Int64] = [:]
    /// The watchdog's sample per partition measured.
    private(set) var samples: [TopicPartition: FetchWatchdog.Sample] = [:]

    /// Measures every partition of `positions` (the ledger's received positions) through
    /// `consumer`; `paused` and `flowVersion` are the loop's as the round starts. A partition
    /// whose watermarks or committed offset cannot be read is left out of this round.
    init(consumer: any GroupConsumer, positions: [TopicPartition: (generation: UInt64, next: Int64?, committed: Int64?)],
         paused: Set<TopicPartition>, flowVersion: UInt64) {
        for (partition, position) in positions {
            guard let marks = try? consumer.watermarks(partition, timeoutMs: 2_000) else { continue }
            var start = position.committed
            if start == nil {
                // Failed (nil): no lag and no watchdog sample this round. The low watermark is
                // not a stand-in: a restart sought there would bring the retained log back.
                start = (try? consumer.committed([partition], timeoutMs: 2_000))?.first.map { $0.offset >= 0 ? $0.offset : marks.low }
            }
            guard let start else { continue }
            lag[partition] = max(0, marks.high - start)
            samples[partition] = FetchWatchdog.Sample(generation: position.generation, nextOffset: position.next ?? start,
                                                      highWatermark: marks.high, paused: paused.contains(partition),
                                                      flowVersion: flowVersion)
        }
    }
}
