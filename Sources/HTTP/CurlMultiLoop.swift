import CCurl
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The libcurl multi handle and the one thread that drives it.
///
/// Threading: every libcurl call on `multi` and on the easy handles happens on the event thread,
/// except `curl_multi_wakeup`, which libcurl documents as callable from any thread; it is called
/// under `queue`'s lock and only while not shut down, so it never races `curl_multi_cleanup`
/// (which the event thread runs after seeing the shutdown flag under that same lock). The
/// event-thread-only state (`transfers`, `spareHandles`, `batch`) is never touched elsewhere.
/// That is why `@unchecked Sendable` is safe here.
final class CurlMultiLoop: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let configuration: HTTPClientConfiguration
    private let queue = Mutex(SubmissionQueue())
    private let inFlight = Atomic<Int>(0)
    /// `pthread_self()` of the event thread once it runs (0 before).
    private let eventThread = Atomic<UInt>(0)
    private let exited = DispatchSemaphore(value: 0)

    // Event thread only.
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var spareHandles: [UnsafeMutableRawPointer] = []
    private var batch: [PendingRequest] = []

    private static let globalInitialization: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    private static let maxSpareHandles = 1024

    init(configuration: HTTPClientConfiguration) {
        precondition(Self.globalInitialization == CURLE_OK, "curl_global_init failed: libcurl cannot be used in this process")
        guard let multi = curl_multi_init() else {
            preconditionFailure("curl_multi_init failed: out of memory")
        }
        self.multi = multi
        self.configuration = configuration
        _ = provisioner_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, configuration.maxCachedConnections))
        _ = provisioner_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(0, configuration.maxConnectionsPerHost))
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { argument in
            let loop = Unmanaged<CurlMultiLoop>.fromOpaque(argument!).takeRetainedValue()
            loop.run()
            return nil
        }, Unmanaged.passRetained(self).toOpaque())
        precondition(started == 0, "could not start the HTTP client thread (pthread_create error \(started)): raise the process thread limit")
        pthread_detach(thread)
    }

    /// Requests submitted and not yet completed.
    var inFlightCount: Int { inFlight.load(ordering: .relaxed) }

    /// Hands `pending` to the event thread; after shutdown, fails it at once on the calling thread.
    func submit(_ pending: PendingRequest) {
        inFlight.add(1, ordering: .relaxed)
        let onEventThread = eventThread.load(ordering: .relaxed) == UInt(pthread_self())
        let accepted = queue.withLock { queue -> Bool in
            let (accepted, needsWakeup) = queue.enqueue(pending)
            // The event thread looks at the queue before it sleeps, so it never needs waking itself.
            if needsWakeup && !onEventThread { _ = curl_multi_wakeup(multi) }
            return accepted
        }
        if !accepted {
            inFlight.subtract(1, ordering: .relaxed)
            pending.completion(.failure(HTTPTransportError(
                kind: .other, requestMayHaveBeenSent: false,
                message: "the HTTP client is shut down; create a new HTTPClient. The request was not sent.",
                elapsedMs: MonotonicClock.millisecondsSince(pending.submittedAt))))
        }
    }

    /// Stops the event thread, failing every pending request; waits for it unless called on it.
    func shutdown() {
        let first = queue.withLock { queue -> Bool in
            guard !queue.isShutDown else { return false }
            queue.isShutDown = true
            _ = curl_multi_wakeup(multi)
            return true
        }
        guard first, eventThread.load(ordering: .relaxed) != UInt(pthread_self()) else { return }
        exited.wait()
    }

    // MARK: - Event thread

    private func run() {
        eventThread.store(UInt(pthread_self()), ordering: .relaxed)
        var running: Int32 = 0
        while true {
            let shuttingDown = queue.withLock { $0.drain(into: &batch) }
            if shuttingDown { break }
            for pending in batch { start(pending) }
            batch.removeAll(keepingCapacity: true)
            _ = curl_multi_perform(multi, &running)
            finishCompletedTransfers()
            // Completion callbacks may have submitted more without waking us: look before sleeping.
            let idle = queue.withLock { $0.pending.isEmpty && !$0.isShutDown }
            if idle { _ = curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
        failEverything()
        exited.signal()
    }

    private func start(_ pending: PendingRequest) {
        let remainingMs = pending.request.timeoutMs - Int(MonotonicClock.millisecondsSince(pending.submittedAt))
        guard remainingMs > 0 else {
            return complete(pending, .failure(HTTPTransportError(
                kind: .timedOut, requestMayHaveBeenSent: false,
                message: "the \(pending.request.timeoutMs) ms budget was spent before the request could start. The request was not sent.",
                elapsedMs: MonotonicClock.millisecondsSince(pending.submittedAt))))
        }
        if let problem = RequestValidator.problem(in: pending.request) {
            return complete(pending, .failure(HTTPTransportError(
                kind: .invalidRequest, requestMayHaveBeenSent: false,
                message: "\(problem). The request was not sent.",
                elapsedMs: MonotonicClock.millisecondsSince(pending.submittedAt))))
        }
        guard let easy = spareHandles.popLast() ?? curl_easy_init() else {
            return complete(pending, .failure(HTTPTransportError(
                kind: .other, requestMayHaveBeenSent: false,
                message: "curl_easy_init failed (out of memory). The request was not sent.",
                elapsedMs: MonotonicClock.millisecondsSince(pending.submittedAt))))
        }
        let transfer = CurlTransfer(pending: pending, easy: easy)
        let failedOption = CurlRequestOptions.apply(to: transfer, timeoutMs: remainingMs, configuration: configuration)
        let added = failedOption == nil ? curl_multi_add_handle(multi, easy) : CURLM_OK
        guard failedOption == nil, added == CURLM_OK else {
            recycle(easy)
            let reason = failedOption.map { "libcurl refused option \($0)" } ?? "curl_multi_add_handle failed (code \(added.rawValue))"
            return complete(pending, .failure(HTTPTransportError(
                kind: .invalidRequest, requestMayHaveBeenSent: false,
                message: "\(reason); check the URL, method and headers. The request was not sent.",
                elapsedMs: MonotonicClock.millisecondsSince(pending.submittedAt))))
        }
        transfers[easy] = transfer
    }

    private func finishCompletedTransfers() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = provisioner_curl_msg_result(message)
            _ = curl_multi_remove_handle(multi, easy)
            guard let transfer = transfers.removeValue(forKey: easy) else { continue }
            let result = outcome(of: transfer, code: code)
            recycle(easy)
            complete(transfer.pending, result)
        }
    }

    private func outcome(of transfer: CurlTransfer, code: CURLcode) -> Result<HTTPClientResponse, HTTPTransportError> {
        let elapsedMs = MonotonicClock.millisecondsSince(transfer.pending.submittedAt)
        if code == CURLE_OK {
            var status = 0
            _ = provisioner_curl_easy_getinfo_long(transfer.easy, CURLINFO_RESPONSE_CODE, &status)
            return .success(HTTPClientResponse(status: status, headers: transfer.responseHeaders,
                                               body: transfer.responseBody, elapsedMs: elapsedMs))
        }
        var pretransfer: curl_off_t = 0
        _ = provisioner_curl_easy_getinfo_off(transfer.easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
        return .failure(CurlErrorClassifier.error(for: .init(
            code: code, sendAttempts: transfer.sendAttempts, pretransferMicroseconds: Int64(pretransfer),
            exceededResponseLimit: transfer.exceededResponseLimit, elapsedMs: elapsedMs,
            timeoutMs: transfer.pending.request.timeoutMs, maxResponseBytes: transfer.pending.request.maxResponseBytes,
            detail: transfer.errorDetail(for: code))))
    }

    private func complete(_ pending: PendingRequest, _ result: Result<HTTPClientResponse, HTTPTransportError>) {
        inFlight.subtract(1, ordering: .relaxed)
        pending.completion(result)
    }

    private func recycle(_ easy: UnsafeMutableRawPointer) {
        if spareHandles.count < Self.maxSpareHandles {
            curl_easy_reset(easy)
            spareHandles.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
    }

    private func failEverything() {
        for pending in batch {
            complete(pending, .failure(shutdownError(pending, sent: false)))
        }
        batch.removeAll()
        let stranded = transfers
        transfers.removeAll()
        for (easy, transfer) in stranded {
            _ = curl_multi_remove_handle(multi, easy)
            var pretransfer: curl_off_t = 0
            _ = provisioner_curl_easy_getinfo_off(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
            let sent = transfer.sendAttempts > 0 || pretransfer > 0
            curl_easy_cleanup(easy)
            complete(transfer.pending, .failure(shutdownError(transfer.pending, sent: sent)))
        }
        for easy in spareHandles { curl_easy_cleanup(easy) }
        spareHandles.removeAll()
        _ = curl_multi_cleanup(multi)
    }

    private func shutdownError(_ pending: PendingRequest, sent: Bool) -> HTTPTransportError {
        HTTPTransportError(
            kind: .other, requestMayHaveBeenSent: sent,
            message: "the HTTP client was shut down before the exchange finished. "
                + (sent ? "The request may have been applied: reconcile before retrying." : "The request was not sent."),
            elapsedMs: MonotonicClock.millisecondsSince(pending.submittedAt))
    }
}
