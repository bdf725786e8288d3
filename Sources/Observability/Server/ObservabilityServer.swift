import HTTP

/// Serves `/healthz` (the process is alive), `/readyz` (ready for work: 200 or 503) and
/// `/metrics` (Prometheus text format) on the configured `http.listen` address.
public final class ObservabilityServer: Sendable {
    /// Liveness path: 200 while the process serves HTTP (deployment probes use it).
    public static let livenessPath = "/healthz"
    /// Readiness path: 200 when ready for work, 503 with the reason when not.
    public static let readinessPath = "/readyz"
    /// Prometheus exposition path (scrape configurations use it).
    public static let metricsPath = "/metrics"

    private let server: HTTPServer

    /// The bound port (useful when started on port 0).
    public var port: UInt16 { server.port }

    /// Starts serving on `host:port`; `readiness` is asked on every `/readyz` and returns
    /// nil when ready or the reason it is not.
    public init(host: String, port: UInt16, registry: MetricsRegistry,
                readiness: @escaping @Sendable () -> String?) throws {
        server = try HTTPServer(host: host, port: port, maxBodyBytes: 1024) { request, responder in
            guard request.method == "GET" || request.method == "HEAD" else {
                responder.respond(.text(405, "only GET\n"))
                return
            }
            switch request.path {
            case Self.livenessPath:
                responder.respond(.text(200, "ok\n"))
            case Self.readinessPath:
                if let reason = readiness() {
                    responder.respond(.text(503, "not ready: \(reason)\n"))
                } else {
                    responder.respond(.text(200, "ready\n"))
                }
            case Self.metricsPath:
                var response = HTTPServerResponse.text(200, registry.renderPrometheus())
                response.headers = [HTTPHeader(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")]
                responder.respond(response)
            default:
                responder.respond(.text(404, "not found: try /healthz, /readyz or /metrics\n"))
            }
        }
    }

    /// Stops serving.
    public func stop() { server.stop() }
}
