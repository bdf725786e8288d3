/// A deadline-aware HTTP/1.1 and HTTP/2 client on libcurl's multi interface.
///
/// One event thread drives every transfer (epoll + `curl_multi_socket_action`); `execute`
/// may be called from any thread and only queues the request and wakes that thread, so thousands
/// of requests can be in flight without a thread each. Connections are kept alive and reused.
///
/// The client never retries, never follows redirects and verifies TLS unless configured otherwise.
/// Each request carries its own time budget (`timeoutMs`) covering the whole exchange; a failure
/// says whether the request may have reached the server (`HTTPTransportError.requestMayHaveBeenSent`).
public final class HTTPClient: Sendable {
    private let loop: CurlMultiLoop

    /// Creates a client and starts its event thread.
    public init(configuration: HTTPClientConfiguration = .init()) {
        loop = CurlMultiLoop(configuration: configuration)
    }

    deinit {
        loop.shutdown()
    }

    /// Starts `request`; `completion` is called exactly once with the answer or the failure.
    ///
    /// `completion` runs on the client's event thread, which serves every other request too: keep
    /// it short (hand the result to a queue, resume a continuation); never block in it. It may call
    /// `execute` again. After `shutdown()`, `completion` runs at once on the calling thread.
    public func execute(_ request: HTTPClientRequest,
                        completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void) {
        loop.submit(PendingRequest(request: request, completion: completion, submittedAt: MonotonicClock.nowNanoseconds()))
    }

    /// Performs `request` and returns the answer or the failure.
    ///
    /// Cancelling the calling task does not stop the exchange: it ends by its own `timeoutMs`.
    public func execute(_ request: HTTPClientRequest) async -> Result<HTTPClientResponse, HTTPTransportError> {
        await withCheckedContinuation { continuation in
            execute(request) { result in continuation.resume(returning: result) }
        }
    }

    /// Requests started and not yet completed (queued ones included).
    public var inFlightCount: Int { loop.inFlightCount }

    /// Fails every pending request (kind `.other`, with `requestMayHaveBeenSent` telling whether it
    /// may have left) and stops the event thread; returns once all completions have run. Later
    /// calls to `execute` fail at once. Safe to call more than once and from a completion callback
    /// (then it does not wait).
    public func shutdown() {
        loop.shutdown()
    }
}
