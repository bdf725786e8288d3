import Observability

/// A latency measured in milliseconds, exported in seconds (`…_seconds`, the Prometheus base unit)
/// and, for one release, also under its deprecated millisecond name (`…_ms`, same buckets × 1000)
/// that earlier releases documented. Remove `deprecated` in the release after.
struct LatencyHistogram: Sendable {
    /// Observations in seconds.
    let seconds: Histogram
    /// The same observations in milliseconds, under the deprecated name.
    let deprecated: Histogram

    init(_ registry: MetricsRegistry, _ name: String, help: String, deprecated deprecatedName: String) {
        seconds = registry.histogram(name, help: help, buckets: Histogram.latencySecondBuckets)
        deprecated = registry.histogram(deprecatedName, help: "Deprecated, removed in the next release: \(name) in milliseconds.",
                                        buckets: Histogram.latencyMillisecondBuckets)
    }

    /// Records one latency of `milliseconds`.
    func observe(_ milliseconds: Double) {
        seconds.observe(milliseconds / 1_000)
        deprecated.observe(milliseconds)
    }
}
