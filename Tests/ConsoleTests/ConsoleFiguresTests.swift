@testable import Console
import Observability
import Testing

/// The Overview's arithmetic: quantiles from histogram buckets, rates between scrapes, breaker
/// states, and the expansion of `dns+http://` targets.
@Suite("Console: overview figures from scrapes", .timeLimit(.minutes(2)))
struct ConsoleFiguresTests {
    static func scrape(at ms: Int64, requests: Double, buckets: [(String, Double)], breaker: Double = 0) -> MetricsScrape {
        var text = "# TYPE provisioner_requests_total counter\n"
        text += "provisioner_requests_total{program=\"p\",wallet=\"google_pay\",status=\"provisioned\"} \(requests)\n"
        text += "# TYPE provisioner_end_to_end_latency_seconds histogram\n"
        for (bound, count) in buckets { text += "provisioner_end_to_end_latency_seconds_bucket{le=\"\(bound)\"} \(count)\n" }
        text += "# TYPE provisioner_breaker_state gauge\nprovisioner_breaker_state{issuer=\"imprint\",program=\"p\"} \(breaker)\n"
        return MetricsScrape(atMs: ms, expositions: ["http://w1/metrics": PrometheusExposition(text)], unreachable: [])
    }

    @Test("quantiles interpolate within a bucket like histogram_quantile; differences count since the earlier scrape")
    func quantiles() {
        let buckets: [Double: Double] = [0.1: 50, 0.2: 90, 0.5: 100, .infinity: 100]
        #expect(Quantile.of(0.5, buckets: buckets) == 0.1)
        #expect(abs((Quantile.of(0.7, buckets: buckets) ?? 0) - 0.15) < 1e-9)
        #expect(abs((Quantile.of(0.99, buckets: buckets) ?? 0) - 0.47) < 1e-9)
        #expect(Quantile.of(0.5, buckets: [:]) == nil)
        #expect(OverviewFigures.format(1e20) == "1e+20" && OverviewFigures.format(.nan) == "–" && OverviewFigures.format(2.25) == "2.3")
        #expect(Quantile.difference([0.1: 60, .infinity: 70], [0.1: 50, .infinity: 60]) == [0.1: 10, .infinity: 10])
        #expect(Quantile.difference([0.1: 5, .infinity: 5], [0.1: 50, .infinity: 60]) == [0.1: 5, .infinity: 5], "a restart")
    }

    @Test("requests per second, p99 over the last minute, results by status and breaker states")
    func figures() {
        let first = Self.scrape(at: 0, requests: 100, buckets: [("0.1", 100), ("1", 100), ("+Inf", 100)])
        let second = Self.scrape(at: 70_000, requests: 800, buckets: [("0.1", 100), ("1", 800), ("+Inf", 800)], breaker: 2)
        let figures = OverviewFigures(points: [OverviewPoint(first), OverviewPoint(second)], latest: second, endpoints: 1)
        let text = Dictionary(figures.figures.map { ($0.id, $0.text) }, uniquingKeysWith: { a, _ in a })
        #expect(text["requests_per_second"] == "10")
        #expect(text["requests_total"] == "800")
        #expect(text["e2e_p99"] == "991 ms", "all 700 recent results fell in (0.1, 1]: \(text["e2e_p99"] ?? "")")
        #expect(text["status_provisioned"] == "800")
        #expect(text["breaker_p"] == "open")
        #expect(text["workers_up"] == "1 of 1")
        #expect(figures.charts.first { $0.id == "chart_requests" }?.points.isEmpty == false)
    }

    @Test("dns+http:// targets expand to one URL per address; plain URLs stay as they are")
    func targets() {
        let expanded = MetricsTargets.expand(["dns+http://localhost:9464/metrics", "http://10.0.0.1:9464/metrics"])
        #expect(expanded.contains("http://127.0.0.1:9464/metrics"), "\(expanded)")
        #expect(expanded.last == "http://10.0.0.1:9464/metrics")
        #expect(MetricsTargets.expand(["dns+http://no-such-host.invalid:9464/metrics"]).isEmpty)
    }
}
