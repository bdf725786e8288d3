import Observability

/// One round of scraping every configured `/metrics` endpoint.
public struct MetricsScrape: Sendable {
    /// When the round ended (epoch ms).
    public var atMs: Int64
    /// Endpoint URL → its exposition (absent when the scrape failed).
    public var expositions: [String: PrometheusExposition]
    /// Endpoints that did not answer 200 in time.
    public var unreachable: [String]

    /// The sum over every endpoint of the samples named `name` with labels `matching`.
    public func sum(_ name: String, matching: [String: String] = [:]) -> Double {
        expositions.values.map { $0.sum(name, matching: matching) }.reduce(0, +)
    }

    /// Every sample named `name` across endpoints (with the endpoint URL).
    public func samples(_ name: String) -> [(endpoint: String, sample: PrometheusExposition.Sample)] {
        expositions.sorted { $0.key < $1.key }.flatMap { endpoint, exposition in
            exposition.samples.filter { $0.name == name }.map { (endpoint, $0) }
        }
    }

    /// The cumulative histogram `name` summed across endpoints: upper bound → count.
    public func histogram(_ name: String) -> [Double: Double] {
        var buckets: [Double: Double] = [:]
        for (_, sample) in samples(name + "_bucket") {
            guard let bound = sample.labels["le"].flatMap({ $0 == "+Inf" ? Double.infinity : Double($0) }), let count = sample.number else { continue }
            buckets[bound, default: 0] += count
        }
        return buckets
    }
}
