/// Requests waiting for the event thread, and whether the client has been shut down.
/// Guarded by `CurlMultiLoop`'s mutex.
struct SubmissionQueue: ~Copyable {
    var pending: [PendingRequest] = []
    var isShutDown = false

    /// Appends `request` unless shut down. Returns whether it was accepted and whether the event
    /// thread must be woken (the queue was empty, so the thread may be asleep in `epoll_wait`).
    mutating func enqueue(_ request: PendingRequest) -> (accepted: Bool, needsWakeup: Bool) {
        guard !isShutDown else { return (false, false) }
        let wasEmpty = pending.isEmpty
        pending.append(request)
        return (true, wasEmpty)
    }

    /// Moves every waiting request into `batch` (which must be empty) and reports shutdown.
    mutating func drain(into batch: inout [PendingRequest]) -> Bool {
        swap(&pending, &batch)
        return isShutDown
    }
}
