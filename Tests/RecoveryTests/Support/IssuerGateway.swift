import Foundation
import HTTP
import Synchronization

/// A real HTTP hop between the worker and the issuer simulator, like an API gateway: every call is
/// forwarded to the simulator and its answer relayed unchanged, except that while the state API
/// is "down" Imprint's wallet-token query (`GET …/wallet_tokens`) is answered 503 without reaching
/// the simulator. Provisioning calls keep working, so the simulator still holds the truth that a
/// later reconciliation must find.
///
/// (The simulator alone cannot do this: its load profile faults only provisioning calls of cards
/// without a magic suffix, and its state query answers whatever the profile says.)
final class IssuerGateway: Sendable {
    private let server: HTTPServer
    private let client: HTTPClient
    private let state: Switches

    /// The gateway's switches, shared with its request handler.
    private final class Switches: Sendable {
        let down = Atomic<Bool>(false)
        let refused = Atomic<Int>(0)
    }

    /// Starts on a free loopback port, forwarding to `upstream` (`http://127.0.0.1:PORT`).
    init(upstream: String) throws {
        let client = HTTPClient()
        let state = Switches()
        let hopHeaders: Set<String> = ["host", "content-length", "connection", "transfer-encoding", "expect", "keep-alive", "date"]
        server = try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
            if state.down.load(ordering: .acquiring), request.method == "GET", request.path.hasSuffix("/wallet_tokens") {
                state.refused.add(1, ordering: .relaxed)
                responder.respond(.json(503, Array(#"{"error":{"code":"service_unavailable","message":"state API down"}}"#.utf8)))
                return
            }
            var url = upstream + request.path
            if !request.query.isEmpty {
                url += "?" + request.query.sorted { $0.key < $1.key }.map { key, value in
                    let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
                    return "\(key)=\(encoded)"
                }.joined(separator: "&")
            }
            let forwarded = HTTPClientRequest(method: request.method, url: url,
                                              headers: request.headers.filter { !hopHeaders.contains($0.name.lowercased()) },
                                              body: request.body, timeoutMs: 120_000)
            client.execute(forwarded) { result in
                switch result {
                case .success(let response):
                    responder.respond(HTTPServerResponse(status: response.status,
                                                         headers: response.headers.filter { !hopHeaders.contains($0.name.lowercased()) },
                                                         body: response.body))
                case .failure(let error):
                    responder.respond(.text(502, "gateway: \(error.message)"))
                }
            }
        }
        self.client = client
        self.state = state
    }

    /// The gateway's base URL.
    var url: String { "http://127.0.0.1:\(server.port)" }

    /// Whether the state query is answered 503.
    var stateAPIDown: Bool {
        get { state.down.load(ordering: .acquiring) }
        set { state.down.store(newValue, ordering: .releasing) }
    }

    /// State queries answered 503 so far.
    var refusedStateQueries: Int { state.refused.load(ordering: .relaxed) }

    /// Stops serving and forwarding.
    func stop() {
        server.stop()
        client.shutdown()
    }
}
