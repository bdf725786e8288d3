import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What libmicrohttpd's callbacks need: the handler, limits, live exchanges and counters.
///
/// Passed to the callbacks as an unretained pointer; `HTTPServer` keeps it alive until the daemon
/// is stopped. All mutable state is behind `Mutex` or `Atomic`, so it is `Sendable` as is.
final class ServerCore: Sendable {
    let handler: @Sendable (HTTPServerRequest, HTTPResponder) -> Void
    let maxBodyBytes: Int
    let lifecycle = Mutex(ServerLifecycle())
    let acceptedConnections = Atomic<Int>(0)
    let openConnections = Atomic<Int>(0)
    private let exchangeIDs = Atomic<Int>(0)

    init(maxBodyBytes: Int, handler: @escaping @Sendable (HTTPServerRequest, HTTPResponder) -> Void) {
        self.maxBodyBytes = maxBodyBytes
        self.handler = handler
    }

    func nextExchangeID() -> Int {
        exchangeIDs.add(1, ordering: .relaxed).newValue
    }

    func openResumeWindow() -> Bool {
        lifecycle.withLock { $0.openResumeWindow() }
    }

    func closeResumeWindow() {
        lifecycle.withLock { $0.closeResumeWindow() }
    }

    /// Refuses new exchanges from now on and returns the live ones; nil when another caller is
    /// already stopping.
    func beginStop() -> [ServerExchange]? {
        lifecycle.withLock { $0.beginStop() }
    }

    /// Answers `live` with 503 (resuming every suspended connection: libmicrohttpd cannot stop
    /// with one), gives those answers up to `drainMilliseconds` to go out, then waits until no
    /// answering thread can still call into libmicrohttpd.
    func answerAndSeal(_ live: [ServerExchange], drainMilliseconds: Int) {
        let stopping = HTTPServerResponse.text(503, "the server is stopping; retry against another instance")
        for exchange in live {
            exchange.answer(stopping)
            // An open stream ends (resuming its connection if suspended), so the connection can finish.
            exchange.openStream.withLock { $0 }?.close()
        }
        let drainDeadline = MonotonicClock.nowNanoseconds() + UInt64(max(0, drainMilliseconds)) * 1_000_000
        while lifecycle.withLock({ $0.liveExchangeCount }) > 0 && MonotonicClock.nowNanoseconds() < drainDeadline {
            usleep(1_000)
        }
        // Resume windows last microseconds (one MHD_resume_connection call).
        while !lifecycle.withLock({ $0.sealIfQuiet() }) {
            sched_yield()
        }
    }

    // MARK: - Polling thread

    /// The last access-handler call for an exchange whose body is complete, or a call after resume.
    func requestComplete(_ exchange: ServerExchange, path: String, method: String) -> MHD_Result {
        switch exchange.stage {
        case .answeredByServer:
            return .YES
        case .dispatched:
            // Called again after MHD_resume_connection.
            guard let response = exchange.answerState.withLock({ $0.takeResumedResponse() }) else { return .YES }
            return queue(response, for: exchange)
        case .receiving:
            break
        }
        if exchange.bodyTooLarge {
            exchange.stage = .answeredByServer
            return ServerCore.queue(ServerCore.tooLarge(maxBodyBytes), on: exchange.connection)
        }
        guard lifecycle.withLock({ $0.register(exchange) }) else {
            exchange.stage = .answeredByServer
            return ServerCore.queue(.text(503, "the server is stopping; retry against another instance"), on: exchange.connection)
        }
        exchange.stage = .dispatched
        let request = HTTPServerRequest(method: method, path: path,
                                        query: ServerCore.queryArguments(of: exchange.connection),
                                        headers: ServerCore.headers(of: exchange.connection), body: exchange.body,
                                        peer: ServerCore.peerAddress(of: exchange.connection))
        exchange.body = []
        handler(request, HTTPResponder(exchange: exchange))
        switch exchange.answerState.withLock({ $0.handlerReturned() }) {
        case .queue(let response):
            return queue(response, for: exchange)
        case .suspend:
            // Delayed answer: park the connection; no thread waits for it.
            MHD_suspend_connection(exchange.connection)
            if exchange.answerState.withLock({ $0.suspendCompleted() }) {
                // The answer arrived while we were suspending.
                MHD_resume_connection(exchange.connection)
            }
            return .YES
        }
    }

    static func tooLarge(_ limit: Int) -> HTTPServerResponse {
        .text(413, "the request body is larger than \(limit) bytes; send a smaller body")
    }

    /// Queues the handler's answer for `exchange`: buffered, or streaming when it has a stream.
    func queue(_ response: HTTPServerResponse, for exchange: ServerExchange) -> MHD_Result {
        guard let stream = response.stream else { return ServerCore.queue(response, on: exchange.connection) }
        if !response.body.isEmpty { stream.sendFirst(response.body) }
        stream.bind(connection: exchange.connection, core: self)
        exchange.openStream.withLock { $0 = stream }
        let context = Unmanaged.passRetained(stream).toOpaque()
        guard let mhdResponse = MHD_create_response_from_callback(UInt64.max, 4096, mhdStreamReader, context, mhdStreamFree) else {
            Unmanaged<HTTPEventStream>.fromOpaque(context).release()
            return .NO
        }
        return ServerCore.queue(response.headers, mhdResponse, status: response.status, on: exchange.connection)
    }

    static func queue(_ response: HTTPServerResponse, on connection: OpaquePointer) -> MHD_Result {
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse = created else { return .NO }
        return queue(response.headers, mhdResponse, status: response.status, on: connection)
    }

    /// Adds `headers` to `mhdResponse`, queues it and drops this reference to it.
    static func queue(_ headers: [HTTPHeader], _ mhdResponse: OpaquePointer, status: Int, on connection: OpaquePointer) -> MHD_Result {
        for header in headers where isSendable(header) {
            _ = MHD_add_response_header(mhdResponse, header.name, header.value)
        }
        let queued = MHD_queue_response(connection, UInt32(clamping: status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return queued
    }

    private static func isSendable(_ header: HTTPHeader) -> Bool {
        !header.hasName("Content-Length") && !header.hasName("Connection") && !header.hasName("Date")
            && !header.name.isEmpty
            && !header.name.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: ":") || $0 == 0x7F })
            && !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
    }

    static func headers(of connection: OpaquePointer) -> [HTTPHeader] {
        var headers: [HTTPHeader] = []
        withUnsafeMutablePointer(to: &headers) { list in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, mhdCollectHeader, list)
        }
        return headers
    }

    /// The connection's peer address as numeric text, nil when not known.
    static func peerAddress(of connection: OpaquePointer) -> String? {
        var text = [CChar](repeating: 0, count: 64)
        guard provisioner_mhd_peer_address(connection, &text, text.count) == 0 else { return nil }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    static func queryArguments(of connection: OpaquePointer) -> [String: String] {
        var arguments: [String: String] = [:]
        withUnsafeMutablePointer(to: &arguments) { dictionary in
            _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, mhdCollectArgument, dictionary)
        }
        return arguments
    }
}
