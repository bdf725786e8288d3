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
    /// Provenance from the `dlq.*` headers (nil when they are missing).
    public var provenance: DeadLetterProvenance?
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
        provenance = DeadLetterProvenance(headers: message.headers)
        summary = DeadLetterSummary(value: message.value, recordTimestampMs: provenance?.originalTimestampMs ?? message.timestampMs,
                                    deadlines: deadlines)
    }

    /// `topic:partition:offset`, the id `dlq show` and `x-replay-of` use.
    public var identifier: String { "\(topic):\(partition):\(offset)" }

    /// The `x-replay-of` header of this entry, when it was itself a replay that failed again.
    public var replayOf: String? {
        headers.last { $0.key == DeadLetterHeader.replayOf }?.value.map { String(decoding: $0, as: UTF8.self) }
    }
}
