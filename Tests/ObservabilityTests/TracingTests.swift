import Contract
import Foundation
import HTTP
import Synchronization
import Testing
@testable import Observability
import TestSupport

/// The span exporter against a real HTTP server (the HTTP module's), and the trace context rules.
@Suite("Tracing: trace context, sampling, the bounded span exporter", .timeLimit(.minutes(5)))
struct TracingTests {
    /// A collector that keeps every body posted to it.
    final class Collector: Sendable {
        final class Bodies: Sendable {
            let list = Mutex<[(path: String, body: [UInt8])]>([])
        }

        let bodies = Bodies()
        let server: HTTPServer

        init() throws {
            let bodies = self.bodies
            server = try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
                bodies.list.withLock { $0.append((request.path, request.body)) }
                responder.respond(.json(200, Array("{}".utf8)))
            }
        }

        var endpoint: String { "http://127.0.0.1:\(server.port)" }
        var posted: [(path: String, body: [UInt8])] { bodies.list.withLock { $0 } }
    }

    static func span(_ name: String, trace: TraceContext) -> Span {
        Span(context: trace.child(), name: name, kind: .internal, startMs: 1_700_000_000_000, endMs: 1_700_000_000_005,
             attributes: [("program", "demo"), ("request_id", "r-1")])
    }

    @Test func aFullQueueDropsSpansAndCountsThemWithoutBlocking() throws {
        let collector = try Collector()
        defer { collector.server.stop() }
        let registry = MetricsRegistry()
        var settings = SpanExporter.Settings(endpoint: collector.endpoint, maxQueue: 3, instance: "w1")
        settings.flushIntervalMs = 600_000  // nothing leaves before close(): the queue fills
        let http = HTTPClient()
        defer { http.shutdown() }
        let exporter = SpanExporter(settings: settings, http: http, metrics: registry)
        let trace = try #require(TraceContext(header: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        let started = ContinuousClock.now
        for index in 0..<5 { exporter.record(Self.span("span \(index)", trace: trace)) }
        #expect(ContinuousClock.now - started < .seconds(1), "recording never waits on the network")
        #expect(registry.value("provisioner_spans_dropped_total") == 2, "two spans beyond max_queue 3 are dropped and counted")
        #expect(collector.posted.isEmpty)
        exporter.close()
        let posted = collector.posted
        #expect(posted.count == 1 && posted.first?.path == "/v1/traces")
        let document = try JSONParser().parse(String(decoding: posted.first?.body ?? [], as: UTF8.self))
        let spans = document["resourceSpans"]?.arrayValue?.first?["scopeSpans"]?.arrayValue?.first?["spans"]?.arrayValue ?? []
        #expect(spans.compactMap { $0["name"]?.stringValue } == ["span 0", "span 1", "span 2"], "the first three, in order")
        #expect(registry.value("provisioner_spans_exported_total") == 3)
        exporter.record(Self.span("after close", trace: trace))
        #expect(registry.value("provisioner_spans_dropped_total") == 3, "a span after close is dropped and counted")
    }

    @Test func aCollectorThatIsDownCostsTheBatchNotTheCaller() throws {
        let registry = MetricsRegistry()
        // A port nothing listens on: the connection is refused.
        var settings = SpanExporter.Settings(endpoint: "http://127.0.0.1:9", maxQueue: 10, instance: "w1")
        settings.flushIntervalMs = 50
        settings.timeoutMs = 2_000
        let http = HTTPClient()
        defer { http.shutdown() }
        let exporter = SpanExporter(settings: settings, http: http, metrics: registry)
        let trace = try #require(TraceContext(header: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        for index in 0..<4 { exporter.record(Self.span("span \(index)", trace: trace)) }
        exporter.close()
        #expect(registry.value("provisioner_spans_export_failed_total") == 4)
        #expect((registry.value("provisioner_spans_exported_total") ?? 0) == 0)
    }

    @Test func anExporterNobodyHoldsEndsItsLoop() async throws {
        var settings = SpanExporter.Settings(endpoint: "http://127.0.0.1:9", maxQueue: 10, instance: "w1")
        settings.flushIntervalMs = 20
        let http = HTTPClient()
        defer { http.shutdown() }
        weak var weakExporter: SpanExporter?
        do {
            let exporter = SpanExporter(settings: settings, http: http, metrics: MetricsRegistry())
            weakExporter = exporter
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while weakExporter != nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakExporter == nil, "the export loop keeps an exporter nobody holds alive")
    }

    @Test func traceContextReadsW3CAndMakesChildren() throws {
        let header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        let context = try #require(TraceContext(header: header))
        #expect(context.traceID == "0af7651916cd43dd8448eb211c80319c" && context.spanID == "b7ad6b7169203331" && context.flags == "01")
        #expect(context.header == header)
        let child = context.child()
        #expect(child.traceID == context.traceID && child.flags == "01" && child.parentSpanID == "b7ad6b7169203331")
        #expect(child.spanID.count == 16 && child.spanID != context.spanID && child.spanID != context.child().spanID)
        #expect(child.header == "00-0af7651916cd43dd8448eb211c80319c-\(child.spanID)-01")
        for bad in ["", "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-00000000000000000000000000000000-b7ad6b7169203331-01",
                    "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
                    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331", "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01"] {
            #expect(TraceContext(header: bad) == nil, "\(bad) is refused")
        }
    }

    @Test func samplingIsDecidedByTraceIDAlone() {
        func context(_ low: String) -> TraceContext {
            TraceContext(traceID: "0af7651916cd43dd" + low, spanID: "b7ad6b7169203331", parentSpanID: nil, flags: "00")
        }
        let half = Tracer(ratio: 0.5) { _ in }
        #expect(half.samples(context("0000000000000001")))
        #expect(half.samples(context("7fffffffffffffff")))
        #expect(!half.samples(context("8000000000000001")))
        #expect(!half.samples(context("ffffffffffffffff")))
        #expect(Tracer(ratio: 1) { _ in }.samples(context("ffffffffffffffff")))
        #expect(!Tracer(ratio: 0) { _ in }.samples(context("0000000000000001")))
        let kept = Counter()
        let tracer = Tracer(ratio: 0.5) { _ in kept.increment() }
        tracer.record(Span(context: context("ffffffffffffffff"), name: "dropped", kind: .internal, startMs: 0, endMs: 0))
        tracer.record(Span(context: context("0000000000000002"), name: "kept", kind: .internal, startMs: 0, endMs: 0))
        #expect(kept.value == 1)
    }
}
