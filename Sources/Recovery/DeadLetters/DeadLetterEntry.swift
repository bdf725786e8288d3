import Contract
import Kafka

/// One message read from a dead-letter (or parked) topic, with what can safely be said about it.
public struct DeadLetterEntry: Sendable {
    /// The dead-letter topic it was read from.
    public var topic: String
    /// Its partition there.
    public var partition: Int32
    /// Its offset there.
    public var offset: Int64
    /// When it was dead-lettered (record timestamp, epoch ms).
    public var timestampMs: Int64?
    /// The original key (the card id for requests): never printed.
    public var key: [UInt8]?
    /// The original value (stripped for expired Apple Pay requests): never printed raw.
    public var value: [UInt8]?
    /// Headers as stored.
    public var headers: [KafkaHeader]
    /// Provenance from the `dlq.*` headers (nil when they are missing or out of bounds).
    public var provenance: DeadLetterProvenance?
    /// Why `provenance` is nil: the headers are missing, or which one is out of bounds.
    public var provenanceProblem: RecordProblem?
    /// Lenient summary of the value.
    public var summary: DeadLetterSummary

    /// Reads an entry from a message.
    public init(message: KafkaMessage, deadlines: DeadlinePolicy = DeadlinePolicy()) {
        topic = message.topic
        partition = message.partition
        offset = message.offset
        timestampMs = message.timestampMs
        key = message.key
        value = message.value
        headers = message.headers
        switch DeadLetterProvenance.read(headers: message.headers) {
        case .success(let read): provenance = read
        case .failure(let problem): provenanceProblem = problem
        }
        summary = DeadLetterSummary(value: message.value, recordTimestampMs: provenance?.originalTimestampMs ?? message.timestampMs,
                                    deadlines: deadlines)
    }

    /// `topic:partition:offset`, the id `dlq show` and `x-replay-of` use.
    public var identifier: String { "\(topic):\(partition):\(offset)" }

    /// The `x-replay-of` header of this entry, when it was itself a replay that failed again (nil
    /// when the header is not a valid `ReplayReference`).
    public var replayOf: String? {
        guard let bytes = headers.last(where: { $0.key == DeadLetterHeader.replayOf })?.value, ReplayReference(bytes: bytes) != nil
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
