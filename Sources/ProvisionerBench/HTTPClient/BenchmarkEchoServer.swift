import Dispatch
import HTTP
import Synchronization

/// The server side of the HTTP client benchmark: answers every POST `{"ok":true}` after the
/// `X-Delay-Ms` the client asks for, and reports on `/stats` how many answers it held at once.
final class BenchmarkEchoServer: Sendable {
    private struct Counters {
        var pending = 0
        var maxPending = 0
        var acceptedAtReset = 0
    }

    private let counters = Mutex(Counters())
    private let delays = DispatchQueue(label: "bench.delays")
    private let answer = Array(#"{"ok":true,"provisioning_payload":{"status":"accepted"}}"#.utf8)

    /// Starts an `HTTPServer` on 127.0.0.1 and a free port.
    func start() throws -> HTTPServer {
        let serverBox = Mutex<HTTPServer?>(nil)
        let server = try HTTPServer(host: "127.0.0.1", port: 0) { [self] request, responder in
            handle(request, responder, accepted: serverBox.withLock { $0?.acceptedConnectionCount ?? 0 })
        }
        serverBox.withLock { $0 = server }
        return server
    }

    private func handle(_ request: HTTPServerRequest, _ responder: HTTPResponder, accepted: Int) {
        switch request.path {
        case "/stats":
            let counters = counters.withLock { $0 }
            responder.respond(.json(200, Array(
                #"{"pending":\#(counters.pending),"maxPending":\#(counters.maxPending),"connections":\#(accepted - counters.acceptedAtReset)}"#.utf8)))
        case "/stats/reset":
            counters.withLock { $0 = Counters(pending: $0.pending, maxPending: $0.pending, acceptedAtReset: accepted) }
            responder.respond(.json(200, Array("{}".utf8)))
        default:
            let delayMs = request.header("X-Delay-Ms").flatMap(Int.init) ?? 0
            guard delayMs > 0 else { return responder.respond(.json(200, answer)) }
            counters.withLock { counters in
                counters.pending += 1
                counters.maxPending = max(counters.maxPending, counters.pending)
            }
            delays.asyncAfter(deadline: .now() + .milliseconds(delayMs)) { [self] in
                counters.withLock { $0.pending -= 1 }
                responder.respond(.json(200, answer))
            }
        }
    }
}
