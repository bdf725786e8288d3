/// A request handed to `HTTPClient.execute`, waiting in the submission queue for the event thread.
struct PendingRequest: Sendable {
    let request: HTTPClientRequest
    let completion: @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void
    /// `MonotonicClock.nowNanoseconds()` when `execute` was called: the time budget starts here.
    let submittedAt: UInt64
}
