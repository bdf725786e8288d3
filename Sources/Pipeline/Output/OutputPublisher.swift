import Contract
import Kafka
import Observability
import Recovery
import Synchronization

/// Produces the worker's outputs with retries: results, markers, jobs and dead letters gate the
/// request's offset; audit events are retried too but never hold an offset back. A fatal producer
/// error is recorded in `fault` and fails every later message at once (no retry can succeed).
final class OutputPublisher: Sendable {
    /// What happened to a batch.
    struct Outcome: Sendable {
        /// Delivery report per message (nil where every attempt failed).
        var reports: [KafkaDeliveryReport?]
        /// The last error seen, if any message failed.
        var lastError: KafkaError?
        /// Whether every message was delivered.
        var allDelivered: Bool { reports.allSatisfy { $0 != nil } }
    }

    private let producer: any RecordProducer
    private let maxAttempts: Int
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let retryQueue: any WorkQueue
    /// Set once the producer raised a fatal error.
    let fault: ProducerFault

    /// A publisher over `producer`, retrying on `retryQueue` (serial) up to `maxAttempts` times.
    init(producer: any RecordProducer, retryQueue: any WorkQueue, maxAttempts: Int, metrics: WorkerMetrics, logger: Logger,
         fault: ProducerFault = ProducerFault()) {
        self.producer = producer
        self.retryQueue = retryQueue
        self.fault = fault
        self.maxAttempts = maxAttempts
        self.metrics = metrics
        self.logger = logger
    }

    /// Sends every message; `completion` runs once, when each is delivered or has failed
    /// `attempts` times (default: the configured attempts). `untilRefused`: a message the cluster
    /// refuses for good (`KafkaError.refusal`) is not sent again, whatever `attempts` allows.
    /// Runs on the producer's thread: keep it short.
    func publish(_ messages: [KafkaOutgoingMessage], attempts: Int? = nil, untilRefused: Bool = false,
                 completion: @escaping @Sendable (Outcome) -> Void) {
        guard !messages.isEmpty else {
            completion(Outcome(reports: [], lastError: nil))
            return
        }
        let batch = Batch(count: messages.count, completion: completion)
        for (index, message) in messages.enumerated() {
            send(message, index: index, attempt: 1, limit: attempts ?? maxAttempts, untilRefused: untilRefused, batch: batch)
        }
    }

    /// Sends audit events: retried like everything else, dropped (and counted) when every attempt fails.
    func publishAudit(_ events: [AuditEvent], topic: String, traceparent: String?) {
        guard !events.isEmpty else { return }
        let messages = events.map { event in
            KafkaOutgoingMessage(topic: topic, key: event.requestID.map { Array($0.utf8) }, value: event.encodedJSON(),
                                 headers: traceparent.map { [KafkaHeader(key: DeadLetterHeader.traceparent, string: $0)] } ?? [])
        }
        let metrics = self.metrics
        let logger = self.logger
        publish(messages) { outcome in
            guard !outcome.allDelivered else { return }
            let failed = outcome.reports.filter { $0 == nil }.count
            metrics.auditFailures.increment(by: failed)
            logger.error("audit events dropped after retries", [("count", .integer(Int64(failed))),
                                                               ("error", .string(outcome.lastError?.description ?? "unknown"))])
        }
    }

    /// Producer messages not yet acknowledged.
    var outstanding: Int { producer.outstandingCount }

    private func send(_ message: KafkaOutgoingMessage, index: Int, attempt: Int, limit: Int, untilRefused: Bool, batch: Batch) {
        if let fatal = fault.error {
            batch.finish(index, report: nil, error: fatal)
            return
        }
        do {
            try producer.send(message) { [self] result in
                switch result {
                case .success(let report):
                    batch.finish(index, report: report, error: nil)
                case .failure(let error):
                    retry(message, index: index, attempt: attempt, limit: limit, untilRefused: untilRefused, batch: batch, error: error)
                }
            }
        } catch {
            retry(message, index: index, attempt: error.code == .queueFull ? attempt - 1 : attempt, limit: limit,
                  untilRefused: untilRefused, batch: batch, error: error, delayMs: error.code == .queueFull ? 5 : nil)
        }
    }

    private func retry(_ message: KafkaOutgoingMessage, index: Int, attempt: Int, limit: Int, untilRefused: Bool, batch: Batch,
                       error: KafkaError, delayMs: Int? = nil) {
        fault.record(error)
        guard attempt < limit, !error.isFatal, !(untilRefused && error.refusal != nil) else {
            batch.finish(index, report: nil, error: error)
            return
        }
        metrics.publishRetries.increment()
        if attempt >= 2 {
            logger.warning("publish retry", [("topic", .string(message.topic)), ("attempt", .integer(Int64(attempt + 1))),
                                            ("error", .string(error.description))])
        }
        let delay = delayMs ?? min(2_000, 50 << min(attempt, 6))
        retryQueue.asyncAfter(milliseconds: Int64(delay)) { [self] in
            send(message, index: index, attempt: attempt + 1, limit: limit, untilRefused: untilRefused, batch: batch)
        }
    }

    /// Counts deliveries of one `publish` call and calls its completion once.
    private final class Batch: Sendable {
        private let state: Mutex<(remaining: Int, reports: [KafkaDeliveryReport?], error: KafkaError?)>
        private let completion: @Sendable (Outcome) -> Void

        init(count: Int, completion: @escaping @Sendable (Outcome) -> Void) {
            state = Mutex((count, Array(repeating: nil, count: count), nil))
            self.completion = completion
        }

        func finish(_ index: Int, report: KafkaDeliveryReport?, error: KafkaError?) {
            let done: Outcome? = state.withLock { state in
                state.reports[index] = report
                if let error { state.error = error }
                state.remaining -= 1
                return state.remaining == 0 ? Outcome(reports: state.reports, lastError: state.error) : nil
            }
            if let done { completion(done) }
        }
    }
}
