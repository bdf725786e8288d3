/// Which worker has which partition paused, read from the workers' per-partition gauge
/// `provisioner_partition_paused{topic,partition}` (1 paused, 0 not) in one scrape.
public struct PausedPartitions: Sendable {
    /// The gauge's name, as the worker exports it.
    public static let metric = "provisioner_partition_paused"

    private struct Key: Hashable { var topic: String; var partition: Int32 }
    private var byPartition: [Key: [String]] = [:]
    /// Whether a scrape was there to read (without one, nothing is known).
    public let isKnown: Bool

    /// Reads `scrape` (nil: no scrape yet). Samples without a readable topic, partition or value, or
    /// with a value below 1, count as not paused.
    public init(_ scrape: MetricsScrape?) {
        isKnown = scrape != nil
        for (endpoint, sample) in scrape?.samples(Self.metric) ?? [] {
            guard let topic = sample.labels["topic"], let partition = sample.labels["partition"].flatMap({ Int32($0) }),
                  let value = sample.number, value >= 1 else { continue }
            byPartition[Key(topic: topic, partition: partition), default: []].append(endpoint)
        }
    }

    /// The `/metrics` endpoints of the workers that have `partition` of `topic` paused, sorted.
    public func workers(topic: String, partition: Int32) -> [String] {
        (byPartition[Key(topic: topic, partition: partition)] ?? []).sorted()
    }

    /// The Lag page's cell: "paused by <endpoint>, …", "no", or "unknown" before the first scrape.
    public func cell(topic: String, partition: Int32) -> String {
        guard isKnown else { return "unknown" }
        let workers = workers(topic: topic, partition: partition)
        return workers.isEmpty ? "no" : "paused by " + workers.joined(separator: ", ")
    }
}
