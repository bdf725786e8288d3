import Testing
@testable import Observability
import TestSupport

@Suite("Metrics and logging", .timeLimit(.minutes(5)))
struct MetricsRegistryTests {
    @Test func rendersCountersGaugesAndHistogramsInPrometheusFormat() {
        let registry = MetricsRegistry()
        registry.counter("provisioner_requests_total", help: "Requests by status.", labels: ["program": "demo", "status": "provisioned"]).increment(by: 3)
        registry.counter("provisioner_requests_total", help: "Requests by status.", labels: ["status": "expired", "program": "demo"]).increment()
        registry.gauge("provisioner_in_flight", help: "Calls in flight.").set(7)
        registry.computedGauge("provisioner_lag", help: "Lag.", labels: ["partition": "0"]) { 42 }
        let histogram = registry.histogram("provisioner_issuer_latency_ms", help: "Issuer latency.", buckets: [10, 100])
        histogram.observe(5)
        histogram.observe(50)
        histogram.observe(500)
        let text = registry.renderPrometheus()
        #expect(text.contains("# TYPE provisioner_requests_total counter"))
        #expect(text.contains("provisioner_requests_total{program=\"demo\",status=\"provisioned\"} 3"))
        #expect(text.contains("provisioner_requests_total{program=\"demo\",status=\"expired\"} 1"), "labels are sorted by name")
        #expect(text.contains("provisioner_in_flight 7"))
        #expect(text.contains("provisioner_lag{partition=\"0\"} 42"))
        #expect(text.contains("provisioner_issuer_latency_ms_bucket{le=\"10\"} 1"))
        #expect(text.contains("provisioner_issuer_latency_ms_bucket{le=\"100\"} 2"))
        #expect(text.contains("provisioner_issuer_latency_ms_bucket{le=\"+Inf\"} 3"))
        #expect(text.contains("provisioner_issuer_latency_ms_sum 555"))
        #expect(registry.total("provisioner_requests_total", matching: ["program": "demo"]) == 4)
    }

    @Test func escapesLabelValues() {
        let registry = MetricsRegistry()
        registry.counter("c", help: "h", labels: ["reason": "a \"quoted\"\\ line\nbreak"]).increment()
        #expect(registry.renderPrometheus().contains(#"c{reason="a \"quoted\"\\ line\nbreak"} 1"#))
    }

    @Test func histogramQuantileIsTheBucketBound() {
        let histogram = MetricsRegistry().histogram("h", help: "h", buckets: [1, 2, 4, 8])
        for value in [0.5, 1.5, 1.5, 3, 3, 3, 3, 7, 7, 100] { histogram.observe(value) }
        #expect(histogram.quantileUpperBound(0.5) == 4)
        #expect(histogram.quantileUpperBound(0.9) == 8)
        #expect(histogram.quantileUpperBound(1.0) == .infinity)
    }

    @Test func loggerDropsRecordsBelowItsLevel() {
        let capture = CapturingLogHandler()
        let logger = Logger(label: "worker", minimumLevel: .notice, handler: capture)
        logger.info("dropped")
        logger.warning("kept", [("partition", 3), ("program", "demo")])
        #expect(capture.records.count == 1)
        #expect(capture.records.first?.field("partition") == .integer(3))
        #expect(capture.renderedLines == ["warning worker kept partition=3 program=demo"])
    }

    @Test func timestampsAreRFC3339WithMilliseconds() {
        #expect(Timestamps.rfc3339(milliseconds: 1_795_946_400_123) == "2026-11-29T10:00:00.123Z")
        #expect(Timestamps.rfc3339(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
    }
}

@Suite("Metrics: gauges replaced by a later report", .timeLimit(.minutes(1)))
struct ReplacedGaugeTests {
    @Test("replaceGauges drops the scope's series the new values do not name and keeps other scopes'")
    func replacesOnlyTheScope() {
        let registry = MetricsRegistry()
        registry.replaceGauges("lag", help: "Lag.", scope: ["client": "a"], with: [["client": "a", "partition": "0"]: 5, ["client": "a", "partition": "1"]: 6])
        registry.replaceGauges("lag", help: "Lag.", scope: ["client": "b"], with: [["client": "b", "partition": "0"]: 7])
        registry.replaceGauges("lag", help: "Lag.", scope: ["client": "a"], with: [["client": "a", "partition": "1"]: 1])
        let text = registry.renderPrometheus()
        #expect(!text.contains("lag{client=\"a\",partition=\"0\"}"), "\(text)")
        #expect(text.contains("lag{client=\"a\",partition=\"1\"} 1"))
        #expect(text.contains("lag{client=\"b\",partition=\"0\"} 7"))
        registry.replaceGauges("lag", help: "Lag.", scope: ["client": "a"], with: [:])
        #expect(registry.total("lag") == 7)
        #expect(registry.renderPrometheus().contains("# TYPE lag gauge"))
    }
}
