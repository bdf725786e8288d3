/// One report of librdkafka's statistics (`statistics.interval.ms`; the fields of librdkafka's
/// STATISTICS.md this binding reads), as a client saw its cluster at `timestampMicroseconds`.
///
/// Every field librdkafka may leave out across versions is optional or defaulted: a report from an
/// older or newer library still reads. Round trips are in microseconds, as librdkafka gives them.
public struct KafkaStatistics: Sendable, Equatable {
    /// librdkafka's name of the client (`rdkafka#consumer-3`).
    public var clientName: String
    /// `producer` or `consumer`.
    public var clientType: String
    /// librdkafka's monotonic clock at the report, microseconds.
    public var timestampMicroseconds: Int64
    /// Messages in the producer's queues, not yet acknowledged (`msg_cnt`).
    public var queuedMessages: Int64
    /// Bytes of those messages (`msg_size`).
    public var queuedBytes: Int64
    /// Every broker the client knows: bootstrap entries and the cluster's brokers.
    public var brokers: [Broker]
    /// Every partition of every topic the client knows, with its state as the client sees it.
    public var partitions: [Partition]
    /// The consumer group's state (nil for a producer or a consumer without a group).
    public var group: Group?

    /// What a client hands each report to, on the thread that serves its queue (the producer's
    /// poll thread; inside the consumer's `poll`): a report read, or why it could not be. Keep it short.
    public typealias Handler = @Sendable (Result<KafkaStatistics, KafkaError>) -> Void

    /// One broker connection.
    public struct Broker: Sendable, Equatable {
        /// `host:port/id` (`configured` bootstrap entries end in `/bootstrap`).
        public var name: String
        /// The broker's node id; -1 for bootstrap entries and librdkafka's internal broker.
        public var nodeID: Int32
        /// `learned` (from metadata), `configured` (bootstrap), `internal` or `logical`.
        public var source: String
        /// Connection state (`UP`, `DOWN`, `CONNECT`, …).
        public var state: String
        /// Round trips of requests answered in the last interval (nil when the report has none).
        public var roundTrip: Window?

        /// True for a broker of the cluster (a node id learned from metadata), false for bootstrap
        /// entries, librdkafka's internal broker and its logical coordinator entries.
        public var isClusterBroker: Bool { nodeID >= 0 && source != "internal" && source != "logical" }
    }

    /// A rolling window of one latency (librdkafka's HDR histogram of the last interval), microseconds.
    public struct Window: Sendable, Equatable {
        /// Samples in the window (0: the other fields mean nothing).
        public var count: Int64
        /// Mean.
        public var average: Double
        /// Median.
        public var p50: Double
        /// 99th percentile.
        public var p99: Double
        /// Largest sample.
        public var maximum: Double
    }

    /// One partition of one topic.
    public struct Partition: Sendable, Equatable {
        /// The topic.
        public var topic: String
        /// The partition (-1 is librdkafka's unassigned-partition queue of a producer).
        public var partition: Int32
        /// The leader's node id (-1 unknown).
        public var leader: Int32
        /// True when the application assigned (consumer) or produces to (producer) this partition.
        public var isDesired: Bool
        /// The consumer's fetch state (`none`, `stopping`, `stopped`, `offset-query`, `offset-wait`, `active`).
        public var fetchState: String
        /// Messages queued for the producer on this partition (`msgq_cnt`).
        public var queuedMessages: Int64
        /// Messages fetched and not yet handed to the application (`fetchq_cnt`).
        public var fetchedMessages: Int64
        /// Offset of the next message the application will be given (-1001 unknown).
        public var applicationOffset: Int64
        /// Last committed offset (-1001 unknown).
        public var committedOffset: Int64
        /// High watermark the last fetch answer gave (-1 / -1001 unknown).
        public var highWatermark: Int64
        /// Consumer lag as librdkafka computes it (high watermark, or last stable offset under
        /// `read_committed`, minus the committed offset); nil when librdkafka does not know it (-1).
        public var consumerLag: Int64?
    }

    /// The consumer group as this member sees it.
    public struct Group: Sendable, Equatable {
        /// The group handler's state (`up`, `wait-coord`, …).
        public var state: String
        /// The join state (`steady`, `wait-join`, …).
        public var joinState: String
        /// Rebalances seen since the client started.
        public var rebalanceCount: Int64
        /// Partitions assigned to this member.
        public var assignmentSize: Int64
    }
}
