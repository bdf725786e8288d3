import CMicroHTTPD
import Synchronization

/// The body of a response that stays open and is written as it goes (Server-Sent Events): set it
/// as `HTTPServerResponse.stream`, then `send` from any thread and `close` to end the response.
///
/// libmicrohttpd pulls the body through a content-reader callback on the polling thread. With
/// nothing to send, the callback suspends the connection (no thread waits and the poller does not
/// spin) and `send` resumes it. The race between a `send` and the poller suspending is settled the
/// way `ExchangeState` settles a late answer: the poller suspends, then looks again and resumes at
/// once when bytes arrived meanwhile. A suspended connection is never closed by libmicrohttpd, so
/// resuming one is safe; `send` and `close` open the server's resume window first, so
/// `HTTPServer.stop` cannot destroy the daemon between them (and stop closes every open stream
/// before it waits for the connections to end).
public final class HTTPEventStream: @unchecked Sendable {
    // @unchecked Sendable: `state` is behind a mutex; `connection` and `core` are written once by
    // the polling thread before the first callback (in `bind`, under the mutex) and read under it.
    private enum Phase { case running, suspending, suspended, finished }

    /// The connection pointer, usable from the threads the type comment names.
    private struct Connection: @unchecked Sendable { let pointer: OpaquePointer }

    private struct State {
        var buffer: [UInt8] = []
        var closed = false
        var phase = Phase.running
        var connection: Connection?
        var core: ServerCore?
    }

    private let state = Mutex(State())

    /// Creates an open stream with `initial` bytes to send first.
    public init(initial: [UInt8] = []) {
        state.withLock { $0.buffer = initial }
    }

    /// Whether the response is over (closed and sent, the client went away, or the server stopped).
    public var isFinished: Bool { state.withLock { $0.phase == .finished } }

    /// Queues `bytes` for the client (ignored once closed or finished).
    public func send(_ bytes: [UInt8]) {
        update { state in
            guard !state.closed, state.phase != .finished else { return }
            state.buffer += bytes
        }
    }

    /// Ends the response once what was sent has gone out.
    public func close() {
        update { $0.closed = true }
    }

    private func update(_ change: @Sendable (inout State) -> Void) {
        let core = state.withLock { $0.core }
        guard let core else {
            state.withLock { change(&$0) }
            return
        }
        guard core.openResumeWindow() else {
            state.withLock { change(&$0) }
            return
        }
        defer { core.closeResumeWindow() }
        let resume: Connection? = state.withLock { state in
            change(&state)
            guard state.phase == .suspended else { return nil }
            state.phase = .running
            return state.connection
        }
        if let resume { MHD_resume_connection(resume.pointer) }
    }

    // MARK: - Polling thread

    /// Puts `bytes` before anything sent so far (the response's `body`).
    func sendFirst(_ bytes: [UInt8]) {
        state.withLock { $0.buffer = bytes + $0.buffer }
    }

    func bind(connection: OpaquePointer, core: ServerCore) {
        let handle = Connection(pointer: connection)
        state.withLock { state in
            state.connection = handle
            state.core = core
        }
    }

    /// The content-reader callback: bytes copied, 0 after suspending, or -1 at the end.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        enum Step { case copied(Int), end, suspend(Connection) }
        let step: Step = state.withLock { state in
            if !state.buffer.isEmpty {
                let count = min(max, state.buffer.count)
                state.buffer.withUnsafeBytes { bytes in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress!, byteCount: count)
                }
                state.buffer.removeFirst(count)
                return .copied(count)
            }
            if state.closed || state.connection == nil { return .end }
            state.phase = .suspending
            return .suspend(state.connection!)
        }
        switch step {
        case .copied(let count): return count
        case .end: return -1
        case .suspend(let handle):
            let connection = handle.pointer
            MHD_suspend_connection(connection)
            let resumeNow = state.withLock { state -> Bool in
                guard state.phase == .suspending else { return false }
                if !state.buffer.isEmpty || state.closed {
                    state.phase = .running
                    return true
                }
                state.phase = .suspended
                return false
            }
            if resumeNow { MHD_resume_connection(connection) }
            return 0
        }
    }

    /// libmicrohttpd released the response: the connection is done with it.
    func finished() {
        state.withLock { state in
            state.phase = .finished
            state.connection = nil
            state.buffer = []
        }
    }
}

/// `MHD_ContentReaderCallback` for `HTTPEventStream` (`cls` is the retained stream).
func mhdStreamReader(_ cls: UnsafeMutableRawPointer?, _ position: UInt64, _ buffer: UnsafeMutablePointer<CChar>?, _ max: Int) -> Int {
    guard let cls, let buffer else { return -1 }
    return Unmanaged<HTTPEventStream>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, max: max)
}

/// `MHD_ContentReaderFreeCallback`: drops the stream's retain.
func mhdStreamFree(_ cls: UnsafeMutableRawPointer?) {
    guard let cls else { return }
    let stream = Unmanaged<HTTPEventStream>.fromOpaque(cls).takeRetainedValue()
    stream.finished()
}
