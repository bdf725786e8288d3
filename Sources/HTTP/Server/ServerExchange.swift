import CMicroHTTPD
import Synchronization

/// One request on one libmicrohttpd connection, from its headers to the request-completed callback.
///
/// libmicrohttpd holds a +1 reference in the connection's request context from the first access
/// handler call until the request-completed callback; responders hold their own references, so an
/// answer after the connection is gone finds `phase == .finished` and touches nothing.
///
/// `@unchecked Sendable` is safe because: `connection` is used only while the connection provably
/// exists (by the polling thread inside callbacks, or by an answering thread between moving the
/// phase from `.suspended` to `.resuming` and calling `MHD_resume_connection`: a suspended
/// connection is never closed, and `HTTPServer.stop` waits for such resume windows before stopping
/// the daemon); `answerState` is behind a mutex; the receive fields (`stage`, `body`,
/// `bodyTooLarge`) are touched only by the polling thread serving this connection.
final class ServerExchange: @unchecked Sendable {
    /// Progress of the receiving side (polling thread only).
    enum Stage {
        /// Headers seen, body arriving.
        case receiving
        /// A response was queued without calling the handler (413, 503 while stopping).
        case answeredByServer
        /// The handler was called.
        case dispatched
    }

    let id: Int
    let connection: OpaquePointer
    let core: ServerCore
    let answerState = Mutex(ExchangeState())
    /// The open stream of a streaming answer (closed by `HTTPServer.stop` before it waits).
    let openStream = Mutex<HTTPEventStream?>(nil)
    var stage = Stage.receiving
    var body: [UInt8] = []
    var bodyTooLarge = false

    init(id: Int, connection: OpaquePointer, core: ServerCore) {
        self.id = id
        self.connection = connection
        self.core = core
    }

    /// Delivers the first answer; later ones and those for vanished connections are dropped.
    func answer(_ response: HTTPServerResponse) {
        // The window keeps HTTPServer.stop from destroying the daemon between our phase change and
        // MHD_resume_connection. It must open before the phase changes.
        guard core.openResumeWindow() else { return }
        defer { core.closeResumeWindow() }
        let action = answerState.withLock { $0.answer(response) }
        if action == .resume {
            MHD_resume_connection(connection)
        }
    }
}
