import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on libmicrohttpd for the simulator, health and metrics endpoints, and the
/// operator console (whose event streams use `HTTPServerResponse.stream`).
///
/// libmicrohttpd's polling threads (`HTTPServerConfiguration.threadCount`, epoll each) accept
/// connections, read each request body in full (over `maxBodyBytes` → 413 without calling the
/// handler) and call `handler` on the polling thread. The handler must return quickly; it answers
/// through the `HTTPResponder` either at once or later from any thread. A delayed answer suspends
/// the connection and costs no thread, so thousands of slow answers can be pending at once.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked Sendable: `daemon` is read-only after init and destroyed once, by the first
    // `stop()` call that wins `ServerCore.beginStop`; `core` is Sendable.
    private let daemon: OpaquePointer
    private let core: ServerCore
    private let stopDrainMilliseconds: Int
    /// The port the server listens on (the one picked by the system when 0 was passed).
    public let port: UInt16

    /// Starts listening on `host:port` (port 0 picks a free one; read `port`).
    ///
    /// - Parameters:
    ///   - host: an IP address of this machine, `0.0.0.0`, `::` (IPv6 and IPv4) or a local name.
    ///   - maxBodyBytes: larger request bodies are answered 413 without calling `handler`.
    ///   - handler: called on a polling thread with each complete request; must not block.
    public init(host: String, port: UInt16, maxBodyBytes: Int = 1 << 20, configuration: HTTPServerConfiguration = .init(),
                handler: @escaping @Sendable (HTTPServerRequest, HTTPResponder) -> Void) throws(HTTPServerError) {
        let address = try ListenAddress(host: host, port: port)
        let core = ServerCore(maxBodyBytes: maxBodyBytes, handler: handler)
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if address.isIPv6 {
            flags |= address.isIPv6Wildcard ? MHD_USE_DUAL_STACK.rawValue : MHD_USE_IPv6.rawValue
        }
        let context = Unmanaged.passUnretained(core).toOpaque()
        HTTPServer.installPanicReporter
        let started = address.withSocketAddress { socketAddress in
            provisioner_mhd_start_daemon(
                flags, socketAddress, mhdAcceptPolicy, context, mhdAccessHandler, context, mhdRequestCompleted, context,
                mhdConnectionNotification, context,
                UInt32(clamping: configuration.connectionLimit), UInt32(clamping: configuration.idleTimeoutSeconds),
                UInt32(clamping: configuration.threadCount), UInt32(clamping: configuration.listenBacklog))
        }
        guard let daemon = started else {
            throw HTTPServerError(kind: .listenFailed,
                                  message: "could not listen on \(host):\(port): the port may be in use, need privileges, or the "
                                      + "process may be out of file descriptors; pick another port (0 picks a free one)")
        }
        self.daemon = daemon
        self.core = core
        self.stopDrainMilliseconds = configuration.stopDrainMilliseconds
        self.port = provisioner_mhd_bound_port(daemon)
    }

    deinit {
        stop()
    }

    /// Connections accepted since the server started (keep-alive reuse shows as few connections).
    public var acceptedConnectionCount: Int { core.acceptedConnections.load(ordering: .relaxed) }

    /// Connections open right now.
    public var openConnectionCount: Int { core.openConnections.load(ordering: .relaxed) }

    /// Stops accepting, answers every request still waiting for its answer with 503 and ends every
    /// open stream (giving those answers `stopDrainMilliseconds` to go out), closes all connections and joins the polling
    /// threads. Later `respond` calls are ignored. Idempotent; must not be called from the handler.
    ///
    /// Connections that arrive while stopping are refused by the accept policy (closed as soon as
    /// accepted). This does not use `MHD_quiesce_daemon`: in libmicrohttpd 0.9.75 (and 0.9.77) it
    /// removes the listening socket from each polling thread's epoll set from the calling thread,
    /// unsynchronised with the polling thread doing the same in its loop, and whichever loses
    /// gets ENOENT and panics ("Failed to remove listen FD from epoll set", daemon.c:5531 or
    /// 4976): the abort seen in CI. libmicrohttpd owns the listening socket and closes it, once,
    /// in `MHD_stop_daemon`.
    public func stop() {
        guard let live = core.beginStop() else { return }
        core.answerAndSeal(live, drainMilliseconds: stopDrainMilliseconds)
        MHD_stop_daemon(daemon)
    }

    /// Replaces libmicrohttpd's panic handler (which aborts with only file and line) with one that
    /// also reports errno, then aborts; once per process.
    private static let installPanicReporter: Void = {
        MHD_set_panic_func(mhdPanic, nil)
    }()
}
