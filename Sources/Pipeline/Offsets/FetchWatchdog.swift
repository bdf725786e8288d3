import Kafka

/// Notices a requests partition that stopped delivering records although this worker owns it, has
/// not paused it, and records are waiting in it: its fetcher is stuck (seen once, after a
/// whole-cluster outage: one partition of six never fetched again until the next rebalance). Left
/// alone, every request in it would wait for a rebalance that may never come.
///
/// A value-type rule with time passed in (tests need no broker). `RequestConsumer` feeds it one
/// sample per owned partition from its lag measurement (every 5 s, off the poll thread) and
/// carries out each `Stall` on the poll thread: first resume the partition and seek it to the
/// next offset not received, which restarts its fetcher; when a partition so restarted is found
/// stuck again at the same offset, give it up and take it again in this member (`Remedy.refetch`),
/// which replaces its fetcher and whatever pause state librdkafka kept. Nothing is lost or handled
/// twice by either: the offsets below `nextOffset` were all received by this generation, and the
/// offset ledger refuses any record delivered again.
struct FetchWatchdog: Sendable {
    /// What one measurement saw of an owned partition.
    struct Sample: Equatable, Sendable {
        /// The ledger's generation of the partition (a new assignment starts afresh).
        var generation: UInt64
        /// The next offset this generation has not received: the last received plus one; before
        /// any, the committed offset (or the low watermark when nothing is committed).
        var nextOffset: Int64
        /// The partition's high watermark (the offset the next record written will get).
        var highWatermark: Int64
        /// Whether the worker has the partition paused now (backpressure, marker catch-up).
        var paused: Bool
        /// A count the worker raises on every pause or resume of any partition: a partition
        /// paused and resumed between two samples was not fetching the whole time.
        var flowVersion: UInt64

        /// Records wait in the partition that this generation has not received.
        var waiting: Int64 { max(0, highWatermark - nextOffset) }
    }

    /// How a stuck partition is restarted.
    enum Remedy: String, Equatable, Sendable {
        /// Resume it and seek it to the next offset not received.
        case seek
        /// Give it up and take it again at that offset (a seek did not restart it).
        case refetch
    }

    /// A partition found stuck, and where to restart it.
    struct Stall: Equatable, Sendable {
        var partition: TopicPartition
        var generation: UInt64
        /// The offset to seek to: the next one not received.
        var seekTo: Int64
        /// Records that were waiting when the stall began.
        var waiting: Int64
        /// How long no record came although records were waiting.
        var stalledMs: Int64
        /// What to do: a seek first, a refetch when the last remedy at this offset did not help.
        var remedy: Remedy = .seek
    }

    /// How long records may wait unreceived in an unpaused partition before it counts as stuck.
    /// A healthy fetcher delivers within milliseconds; a starved poll thread polls at least every
    /// few hundred. 5 s is far beyond both and still well inside a 20 s window.
    let stallMs: Int64

    /// Per partition: the sample that started the current quiet period, and when.
    private var quiet: [TopicPartition: (sample: Sample, sinceMs: Int64)] = [:]
    /// Per partition: the generation and offset of the last stall reported.
    private var reported: [TopicPartition: (generation: UInt64, offset: Int64)] = [:]

    init(stallMs: Int64 = 5_000) {
        self.stallMs = stallMs
    }

    /// Takes this measurement's samples (partitions not in it are forgotten) and returns the
    /// partitions stuck since an earlier one: same generation, nothing received, never paused in
    /// between, and records already waiting at the start for at least `stallMs`. A partition
    /// reported starts a new quiet period, so it is reported again only after another `stallMs`;
    /// reported again at the same offset, its remedy is `.refetch`.
    mutating func observe(_ samples: [TopicPartition: Sample], nowMs: Int64) -> [Stall] {
        quiet = quiet.filter { samples[$0.key] != nil }
        reported = reported.filter { samples[$0.key]?.generation == $0.value.generation }
        var stalls: [Stall] = []
        for (partition, sample) in samples {
            guard let start = quiet[partition], Self.stillQuiet(start.sample, sample), start.sample.waiting > 0 else {
                quiet[partition] = (sample, nowMs)
                continue
            }
            guard nowMs - start.sinceMs >= stallMs else { continue }
            let again = reported[partition].map { $0.generation == sample.generation && $0.offset == sample.nextOffset } ?? false
            stalls.append(Stall(partition: partition, generation: sample.generation, seekTo: sample.nextOffset,
                                waiting: start.sample.waiting, stalledMs: nowMs - start.sinceMs, remedy: again ? .refetch : .seek))
            reported[partition] = (sample.generation, sample.nextOffset)
            quiet[partition] = (sample, nowMs)
        }
        return stalls.sorted { $0.partition.partition < $1.partition.partition }
    }

    /// Nothing happened to the partition between the two samples that explains no delivery.
    private static func stillQuiet(_ earlier: Sample, _ later: Sample) -> Bool {
        earlier.generation == later.generation && earlier.nextOffset == later.nextOffset
            && earlier.flowVersion == later.flowVersion && !earlier.paused && !later.paused
    }
}
