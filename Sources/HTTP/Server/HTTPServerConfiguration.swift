/// Tuning for `HTTPServer`; the defaults hold 2,000+ slow requests on two cores.
public struct HTTPServerConfiguration: Sendable {
    /// Polling threads (libmicrohttpd's thread pool; each runs its own epoll loop and the handler).
    public var threadCount: Int
    /// Most connections open at once; further clients wait in the listen backlog.
    public var connectionLimit: Int
    /// An idle connection (no bytes either way, not waiting for an answer) is closed after this
    /// many seconds; 0 keeps it forever. Keep it above the clients' keep-alive reuse age.
    public var idleTimeoutSeconds: Int
    /// The listen backlog (the kernel caps it at `net.core.somaxconn`).
    public var listenBacklog: Int

    /// How long `stop()` lets the 503 answers to still-waiting requests go out before closing
    /// every connection.
    public var stopDrainMilliseconds: Int

    /// Creates a configuration.
    public init(threadCount: Int = 2, connectionLimit: Int = 16_384, idleTimeoutSeconds: Int = 60, listenBacklog: Int = 4096,
                stopDrainMilliseconds: Int = 1_000) {
        self.threadCount = threadCount
        self.connectionLimit = connectionLimit
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.listenBacklog = listenBacklog
        self.stopDrainMilliseconds = stopDrainMilliseconds
    }
}
