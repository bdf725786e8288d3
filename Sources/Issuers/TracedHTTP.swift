import HTTP
import Observability

/// The issuer client's HTTP sends, traced: each carries `traceparent` naming a fresh child of the
/// call's span, and the span of a sampled trace is recorded when the answer is in.
struct TracedHTTP: Sendable {
    /// The HTTP client.
    let http: any HTTPExchanging
    /// Records a span per send of a sampled trace (nil: no spans).
    let tracer: Tracer?
    /// Wall time in epoch milliseconds (the span's start and end).
    let clock: @Sendable () -> Int64

    /// Sends `request`. With a trace context the request carries `traceparent` naming a fresh child
    /// span of it (same trace and flags, a new span id per send); for a sampled trace that span is
    /// recorded when the answer is in: program, issuer, method and HTTP status, never the URL (it
    /// can name the card) or anything of the body.
    func send(_ request: HTTPClientRequest, trace: TraceContext?, span name: String, endpoint: IssuerEndpoint,
              completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void) {
        guard let trace else { return http.execute(request, completion: completion) }
        let span = trace.child()
        var request = request
        request.headers.append(HTTPHeader(name: "traceparent", value: span.header))
        guard let tracer, tracer.samples(span) else { return http.execute(request, completion: completion) }
        let startMs = clock()
        let method = request.method
        http.execute(request) { [clock] result in
            var attributes = [("program", endpoint.program), ("issuer", endpoint.kind.rawValue), ("http.request.method", method)]
            var error: String?
            switch result {
            case .success(let response):
                attributes.append(("http.response.status_code", String(response.status)))
                if response.status >= 500 { error = "HTTP \(response.status)" }
            case .failure(let failure):
                attributes.append(("error.type", "\(failure.kind)"))
                error = "\(failure.kind)"
            }
            tracer.record(Span(context: span, name: name, kind: .client, startMs: startMs, endMs: clock(), attributes: attributes, error: error))
            completion(result)
        }
    }
}
