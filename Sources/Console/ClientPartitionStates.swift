/// What the workers' Kafka clients report about each partition they are assigned, read from their
/// librdkafka statistics series in one scrape: `provisioner_kafka_consumer_lag_messages` (records
/// after the committed offset, against the high watermark the client last fetched) and
/// `provisioner_kafka_fetch_state` (1 on the series naming the partition's fetch state); and each
/// worker's round trips to the brokers.
public struct ClientPartitionStates: Sendable {
    /// The lag gauge's name, as the worker exports it.
    public static let lagMetric = "provisioner_kafka_consumer_lag_messages"
    /// The fetch-state gauge's name, as the worker exports it.
    public static let fetchStateMetric = "provisioner_kafka_fetch_state"
    /// The round-trip gauges' names (mean, 99th percentile).
    public static let roundTripMetrics = (average: "provisioner_kafka_broker_rtt_average_seconds", p99: "provisioner_kafka_broker_rtt_p99_seconds")

    /// One worker's view of one partition.
    public struct View: Sendable, Equatable {
        /// The worker's `/metrics` endpoint.
        public var endpoint: String
        /// Its lag (nil: its client does not know it yet).
        public var lag: Int64?
        /// Its fetch state (nil: not reported).
        public var fetchState: String?
    }

    /// One worker client's round trip to one broker, seconds.
    public struct RoundTrip: Sendable, Equatable {
        /// The worker's `/metrics` endpoint.
        public var endpoint: String
        /// Which of its clients (`requests`, `reconcile`, `producer`).
        public var client: String
        /// The broker's node id.
        public var broker: String
        /// Mean over the last statistics interval.
        public var average: Double?
        /// 99th percentile over the last statistics interval.
        public var p99: Double?
    }

    private struct Key: Hashable { var topic: String; var partition: Int32 }
    private var byPartition: [Key: [View]] = [:]
    /// Every worker client's round trip to each broker, by endpoint, client and broker.
    public private(set) var roundTrips: [RoundTrip] = []
    /// Whether a scrape was there to read (without one, nothing is known).
    public let isKnown: Bool

    /// Reads `scrape` (nil: no scrape yet). Samples without a readable topic or partition are skipped.
    public init(_ scrape: MetricsScrape?) {
        isKnown = scrape != nil
        var views: [Key: [String: View]] = [:]
        func key(_ labels: [String: String]) -> Key? {
            guard let topic = labels["topic"], let partition = labels["partition"].flatMap({ Int32($0) }) else { return nil }
            return Key(topic: topic, partition: partition)
        }
        for (endpoint, sample) in scrape?.samples(Self.lagMetric) ?? [] {
            guard let key = key(sample.labels), let value = sample.number, value.isFinite else { continue }
            views[key, default: [:]][endpoint, default: View(endpoint: endpoint)].lag = Int64(value)
        }
        for (endpoint, sample) in scrape?.samples(Self.fetchStateMetric) ?? [] {
            guard let key = key(sample.labels), let state = sample.labels["fetch_state"], (sample.number ?? 0) >= 1 else { continue }
            views[key, default: [:]][endpoint, default: View(endpoint: endpoint)].fetchState = state
        }
        byPartition = views.mapValues { $0.values.sorted { $0.endpoint < $1.endpoint } }
        var trips: [String: RoundTrip] = [:]
        for (metric, isAverage) in [(Self.roundTripMetrics.average, true), (Self.roundTripMetrics.p99, false)] {
            for (endpoint, sample) in scrape?.samples(metric) ?? [] {
                guard let client = sample.labels["client"], let broker = sample.labels["broker"] else { continue }
                let id = "\(endpoint) \(client) \(broker)"
                var trip = trips[id] ?? RoundTrip(endpoint: endpoint, client: client, broker: broker)
                if isAverage { trip.average = sample.number } else { trip.p99 = sample.number }
                trips[id] = trip
            }
        }
        roundTrips = trips.values.sorted { ($0.endpoint, $0.client, $0.broker) < ($1.endpoint, $1.client, $1.broker) }
    }

    /// Every worker's view of `partition` of `topic`, by endpoint (several only during a hand-over).
    public func views(topic: String, partition: Int32) -> [View] {
        byPartition[Key(topic: topic, partition: partition)] ?? []
    }

    /// The Lag page's cells for a partition: the client's lag and fetch state per worker ("lag at
    /// <endpoint>"), "not reported" when no worker's client reports it, "unknown" before the first scrape.
    public func cells(topic: String, partition: Int32) -> (lag: String, fetchState: String) {
        guard isKnown else { return ("unknown", "unknown") }
        let views = views(topic: topic, partition: partition)
        guard !views.isEmpty else { return ("not reported", "not reported") }
        let several = views.count > 1
        func at(_ view: View, _ text: String) -> String { several ? "\(text) at \(view.endpoint)" : text }
        return (views.map { at($0, $0.lag.map(String.init) ?? "not known") }.joined(separator: ", "),
                views.map { at($0, $0.fetchState ?? "not reported") }.joined(separator: ", "))
    }
}
