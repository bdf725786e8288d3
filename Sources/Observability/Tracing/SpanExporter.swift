import Dispatch
import HTTP
import Synchronization

/// Sends finished spans to an OTLP/HTTP collector (`POST {endpoint}/v1/traces`, JSON encoding),
/// in batches, off the request path.
///
/// Threads: `record` is called from any thread (the request flow's pool, the HTTP client's event
/// thread); it only appends to the bounded queue under its mutex, or drops the span and counts it
/// (`provisioner_spans_dropped_total`) when the queue is full or the exporter is closed; it never
/// waits on the network. The exporter's own serial queue (`provisioner.span-export`) alone takes
/// spans off the queue, encodes them and posts one batch at a time, each within `timeoutMs`, on
/// its own HTTP client (not the issuers'). A batch the collector does not accept is counted
/// (`provisioner_spans_export_failed_total`) and not sent again. `close()` ends that loop after
/// a last flush.
public final class SpanExporter: Sendable {
    /// Where and how spans are sent.
    public struct Settings: Sendable {
        /// The collector's base URL; spans go to `<endpoint>/v1/traces`.
        public var endpoint: String
        /// Spans held waiting for export at most; beyond them new spans are dropped and counted.
        public var maxQueue: Int
        /// Spans per export request at most.
        public var maxBatch = 512
        /// How long spans wait for a batch to fill before they are sent anyway.
        public var flushIntervalMs = 1_000
        /// The time one export request may take.
        public var timeoutMs = 5_000
        /// `service.name` of the resource.
        public var serviceName = "provisioner"
        /// `service.instance.id` of the resource (the worker id).
        public var instance: String

        /// Settings for `endpoint` with a queue of `maxQueue` spans; the rest as defaulted.
        public init(endpoint: String, maxQueue: Int, instance: String) {
            self.endpoint = endpoint
            self.maxQueue = maxQueue
            self.instance = instance
        }
    }

    private struct State {
        var queue: [Span] = []
        var closed = false
    }

    private let settings: Settings
    private let url: String
    private let http: any HTTPExchanging
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let dropped: Counter
    private let exported: Counter
    private let failed: Counter

    /// Starts the export loop, posting through `http`; counts into `metrics`.
    public init(settings: Settings, http: any HTTPExchanging, metrics: MetricsRegistry) {
        self.settings = settings
        url = (settings.endpoint.hasSuffix("/") ? String(settings.endpoint.dropLast()) : settings.endpoint) + "/v1/traces"
        self.http = http
        dropped = metrics.counter("provisioner_spans_dropped_total", help: "Spans dropped because the export queue was full (tracing.max_queue)")
        exported = metrics.counter("provisioner_spans_exported_total", help: "Spans the OTLP collector accepted")
        failed = metrics.counter("provisioner_spans_export_failed_total", help: "Spans in export requests the collector did not accept in time")
        // Weak between rounds: an exporter nobody holds any more (a worker whose construction
        // failed, never closed) ends its loop instead of waiting for ever.
        DispatchQueue(label: "provisioner.span-export").async { [weak self] in
            while let exporter = self, exporter.round() {}
        }
    }

    /// Queues a finished span for export, or drops and counts it when the queue is full. Never blocks.
    public func record(_ span: Span) {
        let held: Int? = state.withLock { state in
            guard !state.closed, state.queue.count < settings.maxQueue else { return nil }
            state.queue.append(span)
            return state.queue.count
        }
        guard let held else { return dropped.increment() }
        if held == settings.maxBatch { wake.signal() }
    }

    /// Sends what is queued (one try; the rest is dropped after the first failure) and stops the
    /// export loop; later spans are dropped. Returns once the loop ended. Idempotent.
    public func close() {
        let first: Bool = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        wake.signal()
        finished.wait()
    }

    /// One round of the export loop: waits for a full batch or the flush interval, then sends
    /// what is queued. False once closed and drained.
    private func round() -> Bool {
        _ = wake.wait(timeout: .now() + .milliseconds(settings.flushIntervalMs))
        while true {
            let (batch, closed) = state.withLock { state in
                let batch = Array(state.queue.prefix(settings.maxBatch))
                state.queue.removeFirst(batch.count)
                return (batch, state.closed)
            }
            if batch.isEmpty {
                if closed { finished.signal() }
                return !closed
            }
            if !post(batch) && closed {
                let left = state.withLock { state in
                    defer { state.queue.removeAll() }
                    return state.queue.count
                }
                dropped.increment(by: left)
            }
        }
    }

    /// Posts one batch and waits (on the export queue only) for the answer, at most `timeoutMs`.
    private func post(_ batch: [Span]) -> Bool {
        let body = Span.otlpJSON(batch, serviceName: settings.serviceName, instance: settings.instance)
        let request = HTTPClientRequest(method: "POST", url: url, headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                        body: body, timeoutMs: settings.timeoutMs, maxResponseBytes: 1 << 16)
        let done = DispatchSemaphore(value: 0)
        let accepted = Counter()
        http.execute(request) { result in
            if case .success(let response) = result, (200..<300).contains(response.status) { accepted.increment() }
            done.signal()
        }
        done.wait()
        let ok = accepted.value > 0
        (ok ? exported : failed).increment(by: batch.count)
        return ok
    }
}
