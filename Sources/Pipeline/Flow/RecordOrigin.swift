import Contract
import Kafka
import Observability
import Recovery

/// Where a message came from, and the headers the worker honours and propagates.
struct RecordOrigin: Sendable {
    let partition: TopicPartition
    let offset: Int64
    /// The ledger generation of the partition when the message was received.
    let generation: UInt64
    let timestampMs: Int64?
    let key: [UInt8]?
    let headers: [KafkaHeader]
    /// Set when the record was over the requests topic's bounds as it was read
    /// (`RecordBounds.Incoming`): its sizes and its value's digest; its value and headers were not
    /// kept, nor its key when over the key bound.
    let oversize: KafkaMessage.Oversize?
    let receivedAtMs: Int64
    /// Where the request's results go (checked by `ReplyRouting` at intake; nil: the default topic).
    var reply: ReplyRoute?
    /// Why the request's reply headers are refused, when they are (answered `invalid_request` on
    /// the default results topic).
    var replyRefusal: String?
    /// The program one of whose `max_unsettled` places the record holds (`UnsettledQuota`), given
    /// back when it settles.
    var quotaProgram: String?

    init(message: KafkaMessage, generation: UInt64, receivedAtMs: Int64) {
        partition = TopicPartition(topic: message.topic, partition: message.partition)
        offset = message.offset
        self.generation = generation
        timestampMs = message.timestampMs
        key = message.key
        headers = message.headers
        oversize = message.oversize
        self.receivedAtMs = receivedAtMs
    }

    /// The record's sizes and its value's digest when it is over `bounds`: as the consumer measured
    /// it, or measured here for a record delivered whole (`value` is its value); nil within them.
    func oversize(value: [UInt8], bounds: RecordBounds.Incoming) -> KafkaMessage.Oversize? {
        if let oversize { return oversize }
        let headerBytes = headers.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }
        guard bounds.problem(keyBytes: key?.count, valueBytes: value.count, headerCount: headers.count, headerBytes: headerBytes) != nil
        else { return nil }
        return KafkaMessage.Oversize(key: key, value: value, headers: headers, valueDigest: Crypto.sha256(value))
    }

    /// The reply headers as the message carries them (the last of each name), not yet checked.
    var replyHeaders: Result<ReplyRoute?, ReplyRoute.Problem> {
        ReplyRoute.read { name in
            headers.last(where: { $0.key == name }).map(\.value)
        }
    }

    /// Where the record was read, as log fields: its partition and offset (never its key or value).
    var logFields: [(String, LogValue)] {
        [("partition", .integer(Int64(partition.partition))), ("offset", .integer(offset))]
    }

    /// W3C trace context to propagate, when present and well-formed.
    var traceparent: String? {
        // The same rule a reconciliation job's trace context is read back with (`RecordBounds`):
        // an empty one is not propagated, so the job the worker writes is one it can read.
        guard let bytes = headers.last(where: { $0.key == DeadLetterHeader.traceparent })?.value, bytes.count <= 128 else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        return RecordBounds.isTraceparent(text) ? text : nil
    }

    /// The dead letter this message replays (`x-replay-of`), when it is a replay with a valid
    /// header (`ReplayReference`); a message with an invalid one is dead-lettered at intake
    /// (`replayOfProblem`), so nothing downstream sees it.
    var replayOf: String? {
        guard let bytes = headers.last(where: { $0.key == DeadLetterHeader.replayOf })?.value else { return nil }
        return ReplayReference(bytes: bytes) == nil ? nil : String(decoding: bytes, as: UTF8.self)
    }

    /// Why the message's `x-replay-of` header is refused, when it has one that is not
    /// `topic:partition:offset` within `ReplayReference.maximumBytes` bytes (or is null).
    var replayOfProblem: String? {
        guard let header = headers.last(where: { $0.key == DeadLetterHeader.replayOf }) else { return nil }
        guard let bytes = header.value, ReplayReference(bytes: bytes) != nil else {
            return "the x-replay-of header is not topic:partition:offset (a Kafka topic name and two non-negative integers) "
                + "within \(ReplayReference.maximumBytes) bytes"
        }
        return nil
    }

    /// Headers to put on every output about this request.
    var propagatedHeaders: [KafkaHeader] {
        traceparent.map { [KafkaHeader(key: DeadLetterHeader.traceparent, string: $0)] } ?? []
    }

    /// Headers of the request's result: the trace context and, for a replay, `x-replay-of`
    /// (CONTRACT section 2: the worker honours and propagates both).
    var resultHeaders: [KafkaHeader] {
        propagatedHeaders + (replayOf.map { [KafkaHeader(key: DeadLetterHeader.replayOf, string: $0)] } ?? [])
    }
}
