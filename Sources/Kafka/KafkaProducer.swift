import CRdKafka
import Dispatch

/// Produces records to Kafka with per-record delivery reports.
///
/// Defaults are `acks=all` and `enable.idempotence=true`; any property in `configuration` overrides
/// them (librdkafka property names, passed through verbatim).
///
/// Threading: `send`, `flush`, `partitionCount` and `close` may be called from any thread. Delivery
/// callbacks and the error handler run on the producer's own poll thread (named
/// `kafka-producer`), never on the caller's: keep them short (a blocked callback holds up every
/// later delivery report).
public final class KafkaProducer: @unchecked Sendable {
    // @unchecked Sendable: the only mutable state is behind `gate` (a Mutex) and the librdkafka
    // handle, which librdkafka documents as safe to use from any thread. The handle is destroyed
    // only after `gate` has seen every running call finish.

    /// The properties applied unless the caller sets them.
    public static let defaultConfiguration: [String: String] = [
        "acks": "all",
        "enable.idempotence": "true",
    ]

    /// Callback context reachable from librdkafka's opaque pointer; lives as long as the producer.
    final class Callbacks: Sendable {
        let onError: (@Sendable (KafkaError) -> Void)?
        let statistics: KafkaStatistics.Handler?
        init(onError: (@Sendable (KafkaError) -> Void)?, statistics: KafkaStatistics.Handler?) {
            self.onError = onError
            self.statistics = statistics
        }
    }

    private let handle: OpaquePointer
    private let callbacks: Callbacks
    private let gate = KafkaClientGate()
    private let pollThread: KafkaPollThread
    private let inFlight = InFlight()

    /// Creates a producer; `onError` receives client-level errors (brokers down, fatal errors) on the
    /// poll thread, and `statistics` each statistics report (every `statistics.interval.ms`, when
    /// that property is above 0) on the same thread. Throws `.invalidArgument` for an unknown
    /// property or a bad value.
    public init(configuration: [String: String],
                onError: (@Sendable (KafkaError) -> Void)? = nil,
                statistics: KafkaStatistics.Handler? = nil) throws(KafkaError) {
        let properties = KafkaConfiguration.merged(defaults: Self.defaultConfiguration, overrides: configuration)
        let conf = try KafkaConfiguration.make(properties)
        let callbacks = Callbacks(onError: onError, statistics: statistics)
        rd_kafka_conf_set_dr_msg_cb(conf, kafkaProducerDeliveryReport)
        rd_kafka_conf_set_error_cb(conf, kafkaProducerError)
        if statistics != nil { rd_kafka_conf_set_stats_cb(conf, kafkaProducerStatistics) }
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(callbacks).toOpaque())
        self.handle = try KafkaConfiguration.makeHandle(type: RD_KAFKA_PRODUCER, conf: conf, role: "producer")
        self.callbacks = callbacks
        self.pollThread = KafkaPollThread(name: "kafka-producer", handle: handle)
    }

    deinit {
        shutDown(flushTimeoutMs: 0)
    }

    /// Enqueues `message`; `onDelivery` later runs once on the producer's poll thread with where the
    /// record was written or why it failed. Keep it short.
    ///
    /// Throws at once, without calling `onDelivery`, when the record cannot be enqueued:
    /// `.queueFull` when the local queue (`queue.buffering.max.messages` / `.kbytes`) is full (slow
    /// down and retry), `.unknownPartition` for an explicit partition the topic does not have,
    /// `.messageSizeTooLarge`, or `.destroyed` after `close`.
    public func send(_ message: KafkaOutgoingMessage,
                     onDelivery: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) throws(KafkaError) {
        guard gate.enter(.short) else { throw KafkaError.closed("producer") }
        defer { gate.leave(.short) }
        let delivery = Delivery(completion: onDelivery, inFlight: inFlight)
        inFlight.begin()
        let opaque = Unmanaged.passRetained(delivery).toOpaque()
        if let error = enqueue(message, opaque: opaque) {
            // Not enqueued: librdkafka will never report it, so release the box here.
            Unmanaged<Delivery>.fromOpaque(opaque).release()
            inFlight.end()
            throw error
        }
    }

    /// Enqueues `message` and returns once the cluster acknowledged it.
    ///
    /// Throws what `send(_:onDelivery:)` throws, or the delivery failure. Cancelling the task does
    /// not recall an enqueued record: the call still waits for its delivery report.
    public func send(_ message: KafkaOutgoingMessage) async throws(KafkaError) -> KafkaDeliveryReport {
        let outcome: Result<KafkaDeliveryReport, KafkaError> = await withCheckedContinuation { continuation in
            do throws(KafkaError) {
                try send(message) { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try outcome.get()
    }

    /// Waits until every record sent so far has its delivery report (and its callback has run), at
    /// most `timeoutMs`; false on timeout, after `close`, or at once when called from a delivery
    /// callback (which would wait for itself).
    public func flush(timeoutMs: Int32) -> Bool {
        guard !pollThread.isCurrentThread, gate.enter(.long) else { return false }
        defer { gate.leave(.long) }
        return waitForDeliveries(timeoutMs: timeoutMs)
    }

    /// Every topic the cluster lists, with its partition count (nil for a topic listed with an
    /// error, such as one this client may not write), from one metadata request; never creates a topic.
    public func partitionCounts(timeoutMs: Int32) throws(KafkaError) -> [String: Int?] {
        let counts = try gate.withCall(.short) { () throws(KafkaError) -> [String: Int?] in
            try KafkaMetadata.partitionCounts(handle: handle, timeoutMs: timeoutMs)
        }
        guard let counts else { throw KafkaError.closed("producer") }
        return counts
    }

    /// The number of partitions of `topic`, from cluster metadata; `.unknownTopicOrPartition` when the
    /// topic does not exist (it is never created by this call).
    public func partitionCount(topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        let count = try gate.withCall(.short) { () throws(KafkaError) -> Int in
            try KafkaMetadata.partitionCount(handle: handle, topic: topic, timeoutMs: timeoutMs)
        }
        guard let count else { throw KafkaError.closed("producer") }
        return count
    }

    /// Raises a fabricated fatal error (librdkafka's `rd_kafka_test_fatal_error`), for tests of
    /// how an application handles one: later sends fail with a fatal error and the error handler
    /// is told. False when a fatal error was raised already. Package-only: the worker's test faults
    /// (`Worker+Testing`) reach it; nothing outside this package can.
    @discardableResult
    package func raiseFatalErrorForTesting(reason: String) -> Bool {
        let raised = try? gate.withCall(.short) { () throws(KafkaError) -> Bool in
            rd_kafka_test_fatal_error(handle, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, reason) == RD_KAFKA_RESP_ERR_NO_ERROR
        }
        return raised ?? false
    }

    /// The number of records sent whose delivery callback has not finished yet.
    public var outstandingCount: Int {
        inFlight.count
    }

    /// Flushes for up to `timeoutMs`, fails what is still undelivered with `.purgedFromQueue` /
    /// `.purgedInFlight` (their callbacks run), stops the poll thread and destroys the client.
    /// Later calls throw `.destroyed`. Idempotent. Called from a delivery callback it returns at once
    /// and the poll thread does the same after the callback.
    public func close(timeoutMs: Int32) {
        shutDown(flushTimeoutMs: timeoutMs)
    }

    private func shutDown(flushTimeoutMs: Int32) {
        guard gate.beginDraining() else { return }
        gate.close()
        if pollThread.isCurrentThread {
            // Closed from a delivery callback, or the last reference went away inside one: the poll
            // thread must first return to librdkafka, so it finishes the shutdown itself afterwards.
            // The closure keeps `callbacks` alive for the error callbacks served meanwhile.
            let handle = KafkaPollThread.Handle(raw: handle)
            let inFlight = inFlight
            let callbacks = callbacks
            pollThread.stopFromPollThread {
                withExtendedLifetime(callbacks) {
                    Self.serveDeliveries(handle.raw, inFlight, timeoutMs: flushTimeoutMs)
                    if !inFlight.isEmpty {
                        rd_kafka_purge(handle.raw, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
                        Self.serveDeliveries(handle.raw, inFlight, timeoutMs: 5_000)
                    }
                    rd_kafka_destroy(handle.raw)
                }
            }
            return
        }
        // The poll thread keeps serving delivery reports while we flush and purge.
        if !waitForDeliveries(timeoutMs: flushTimeoutMs) {
            rd_kafka_purge(handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
            _ = waitForDeliveries(timeoutMs: 5_000)
        }
        pollThread.stop()
        rd_kafka_destroy(handle)
    }

    /// Polls on the calling thread until every delivery report was served or `timeoutMs` passed.
    private static func serveDeliveries(_ handle: OpaquePointer, _ inFlight: InFlight, timeoutMs: Int32) {
        let deadline = DispatchTime.now() + .milliseconds(Int(max(timeoutMs, 0)))
        while !inFlight.isEmpty && DispatchTime.now() < deadline {
            rd_kafka_poll(handle, 10)
        }
    }

    private func waitForDeliveries(timeoutMs: Int32) -> Bool {
        // Not rd_kafka_flush: it serves delivery reports on the calling thread, and callbacks must
        // only ever run on the poll thread. Lingering records still leave after linger.ms.
        inFlight.wait(timeoutMs: timeoutMs)
    }

    /// Hands one record to librdkafka; the error when it was not enqueued.
    private func enqueue(_ message: KafkaOutgoingMessage, opaque: UnsafeMutableRawPointer) -> KafkaError? {
        let headers = Self.makeHeaders(message.headers)
        let error: OpaquePointer? = message.topic.withCString { topic in
            Self.withBytes(message.key) { key in
                Self.withBytes(message.value) { value in
                    var fields: [rd_kafka_vu_t] = []
                    fields.reserveCapacity(8)
                    var field = rd_kafka_vu_t()
                    field.vtype = RD_KAFKA_VTYPE_TOPIC
                    field.u.cstr = topic
                    fields.append(field)
                    field = rd_kafka_vu_t()
                    field.vtype = RD_KAFKA_VTYPE_MSGFLAGS
                    field.u.i = RD_KAFKA_MSG_F_COPY
                    fields.append(field)
                    if let value {
                        field = rd_kafka_vu_t()
                        field.vtype = RD_KAFKA_VTYPE_VALUE
                        field.u.mem.ptr = UnsafeMutableRawPointer(mutating: value.baseAddress)
                        field.u.mem.size = value.count
                        fields.append(field)
                    }
                    if let key {
                        field = rd_kafka_vu_t()
                        field.vtype = RD_KAFKA_VTYPE_KEY
                        field.u.mem.ptr = UnsafeMutableRawPointer(mutating: key.baseAddress)
                        field.u.mem.size = key.count
                        fields.append(field)
                    }
                    if let partition = message.partition {
                        field = rd_kafka_vu_t()
                        field.vtype = RD_KAFKA_VTYPE_PARTITION
                        field.u.i32 = partition
                        fields.append(field)
                    }
                    if let timestamp = message.timestampMs {
                        field = rd_kafka_vu_t()
                        field.vtype = RD_KAFKA_VTYPE_TIMESTAMP
                        field.u.i64 = timestamp
                        fields.append(field)
                    }
                    if let headers {
                        field = rd_kafka_vu_t()
                        field.vtype = RD_KAFKA_VTYPE_HEADERS
                        field.u.headers = headers
                        fields.append(field)
                    }
                    field = rd_kafka_vu_t()
                    field.vtype = RD_KAFKA_VTYPE_OPAQUE
                    field.u.ptr = opaque
                    fields.append(field)
                    return rd_kafka_produceva(handle, fields, fields.count)
                }
            }
        }
        guard let error else { return nil }
        // On failure the application keeps ownership of a VTYPE_HEADERS list.
        if let headers { rd_kafka_headers_destroy(headers) }
        var failure = KafkaError.consuming(error, context: "could not enqueue a record for '\(message.topic)'")
        if failure.code == .queueFull {
            failure.message += "; the local queue is full: wait for deliveries (or raise queue.buffering.max.messages) and retry"
        }
        return failure
    }

    /// A header list owned by the caller until a successful produce hands it to librdkafka.
    private static func makeHeaders(_ headers: [KafkaHeader]) -> OpaquePointer? {
        guard !headers.isEmpty, let list = rd_kafka_headers_new(headers.count) else { return nil }
        for header in headers {
            withBytes(header.value) { value in
                _ = rd_kafka_header_add(list, header.key, -1, value?.baseAddress, value?.count ?? 0)
            }
        }
        return list
    }

    /// Calls `body` with the bytes of `bytes`, with a non-null address even when empty (librdkafka
    /// reads a null address as a null value, which Kafka distinguishes from an empty one).
    private static func withBytes<T>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
        guard let bytes else { return body(nil) }
        if bytes.isEmpty {
            return withUnsafeBytes(of: UInt8(0)) { marker in
                body(UnsafeRawBufferPointer(start: marker.baseAddress, count: 0))
            }
        }
        return bytes.withUnsafeBytes { body($0) }
    }
}
