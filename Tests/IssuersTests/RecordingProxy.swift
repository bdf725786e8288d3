import HTTP
import Synchronization

/// A loopback HTTP proxy in front of the simulator that records every exchange byte for byte:
/// what the issuer client sent (headers, body) and what the simulator answered.
final class RecordingProxy: Sendable {
    struct Exchange: Sendable {
        var request: HTTPServerRequest
        var response: HTTPClientResponse
    }

    private final class Log: Sendable {
        let entries = Mutex<[Exchange]>([])
    }

    private let server: HTTPServer
    private let client: HTTPClient
    private let log = Log()

    /// Forwards to `target` (`http://127.0.0.1:PORT`), path and query unchanged.
    init(target: String) throws {
        let client = HTTPClient()
        let log = self.log
        server = try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
            let skipped: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "expect"]
            var url = target + request.path
            if !request.query.isEmpty {
                url += "?" + request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
            }
            let forwarded = HTTPClientRequest(method: request.method, url: url,
                                              headers: request.headers.filter { !skipped.contains($0.name.lowercased()) },
                                              body: request.body, timeoutMs: 30_000)
            client.execute(forwarded) { result in
                switch result {
                case .success(let response):
                    log.entries.withLock { $0.append(Exchange(request: request, response: response)) }
                    responder.respond(HTTPServerResponse(status: response.status,
                                                         headers: response.headers.filter { !skipped.contains($0.name.lowercased()) },
                                                         body: response.body))
                case .failure:
                    responder.respond(HTTPServerResponse(status: 599))
                }
            }
        }
        self.client = client
    }

    deinit {
        server.stop()
        client.shutdown()
    }

    /// `http://127.0.0.1:PORT` of the proxy.
    var base: String { "http://127.0.0.1:\(server.port)" }

    /// Every exchange so far, in order of completion.
    var exchanges: [Exchange] { log.entries.withLock { $0 } }
}
