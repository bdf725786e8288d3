/// Server-wide state under `ServerCore`'s mutex: the live exchanges and the stop sequence.
///
/// Stopping: `beginStop` refuses new exchanges and returns the live ones (to be answered 503, which
/// resumes every suspended connection, since libmicrohttpd cannot stop with suspended
/// connections); `sealIfQuiet` then waits until no answering thread is between a phase change and
/// `MHD_resume_connection`, and closes the door on later ones before the daemon is destroyed.
struct ServerLifecycle {
    private(set) var isStopping = false
    private(set) var isSealed = false
    private var openResumeWindows = 0
    private var exchanges: [Int: ServerExchange] = [:]

    /// Adds a live exchange before its handler runs; false once stopping (answer 503 instead).
    mutating func register(_ exchange: ServerExchange) -> Bool {
        guard !isStopping else { return false }
        exchanges[exchange.id] = exchange
        return true
    }

    /// Forgets an exchange whose request-completed callback ran.
    mutating func unregister(id: Int) {
        exchanges[id] = nil
    }

    /// An answering thread may call into libmicrohttpd until `closeResumeWindow`; false once sealed.
    mutating func openResumeWindow() -> Bool {
        guard !isSealed else { return false }
        openResumeWindows += 1
        return true
    }

    /// Ends a window opened by `openResumeWindow`.
    mutating func closeResumeWindow() {
        openResumeWindows -= 1
    }

    /// Exchanges whose request-completed callback has not run yet.
    var liveExchangeCount: Int { exchanges.count }

    /// Starts stopping; the live exchanges to answer, or nil when already stopping.
    mutating func beginStop() -> [ServerExchange]? {
        guard !isStopping else { return nil }
        isStopping = true
        return Array(exchanges.values)
    }

    /// Seals the server when no resume window is open; true when sealed.
    mutating func sealIfQuiet() -> Bool {
        guard openResumeWindows == 0 else { return false }
        isSealed = true
        return true
    }
}
