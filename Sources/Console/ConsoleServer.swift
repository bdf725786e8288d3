import Dispatch
import HTTP
import Observability

/// The console's web server: libmicrohttpd (`HTTPServer`) in front of `ConsoleApp`. Each request
/// is handed from the polling thread to a concurrent queue (pages read Kafka, which takes a
/// moment) and answered from there.
public final class ConsoleServer: Sendable {
    private let server: HTTPServer
    /// The application (sessions, jobs, pages).
    public let app: ConsoleApp
    /// The port listened on.
    public var port: UInt16 { server.port }

    /// Listens on `host:port` (port 0 picks one) and serves `context`.
    public init(host: String, port: UInt16, context: ConsoleContext) throws(HTTPServerError) {
        let app = ConsoleApp(context: context)
        let queue = DispatchQueue(label: "console-requests", attributes: .concurrent)
        server = try HTTPServer(host: host, port: port, maxBodyBytes: 64 * 1024,
                                configuration: HTTPServerConfiguration(threadCount: 1, connectionLimit: 256)) { request, responder in
            queue.async { app.handle(request, responder: responder) }
        }
        self.app = app
    }

    /// Stops serving.
    public func stop() {
        server.stop()
    }
}
