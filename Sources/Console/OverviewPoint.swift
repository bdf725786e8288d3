/// What the console keeps of one scrape for the last 15 minutes of charts.
public struct OverviewPoint: Sendable {
    /// When (epoch ms).
    public var atMs: Int64
    /// `provisioner_requests_total`, summed.
    public var requests: Double
    /// `provisioner_dead_letters_total`, summed.
    public var deadLetters: Double
    /// `provisioner_deadline_misses_total`, summed.
    public var deadlineMisses: Double
    /// `provisioner_end_to_end_latency_seconds` buckets, summed.
    public var endToEnd: [Double: Double]
    /// `provisioner_consumer_lag`, summed.
    public var lag: Double

    /// Reads the point from a scrape.
    public init(_ scrape: MetricsScrape) {
        atMs = scrape.atMs
        requests = scrape.sum("provisioner_requests_total")
        deadLetters = scrape.sum("provisioner_dead_letters_total")
        deadlineMisses = scrape.sum("provisioner_deadline_misses_total")
        endToEnd = scrape.histogram("provisioner_end_to_end_latency_seconds")
        lag = scrape.sum("provisioner_consumer_lag")
    }
}
