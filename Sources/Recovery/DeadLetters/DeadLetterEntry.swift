import Contract
import Kafka

/// One message read from a dead-letter (or parked) topic, with what can safely be said about it.
///
/// An entry holds the record's body (key, value, every header) only as read by offset for the
/// one letter being shown or replayed (`DeadLetterStore.letter`); a listing keeps the summary
/// (`summarized`): provenance, the allowed headers, sizes and a digest, so a read of many large
/// letters holds little more than their count.
public struct DeadLetterEntry: Sendable {
    /// Whether a summary's seal (`dlq.mac`) verified when the letter was read.
    public enum SealCheck: Sendable, Equatable {
        /// It verified under the reader's replay key.
        case verified
        /// It did not, and why (a line an operator can act on).
        case failed(String)
    }

    /// The dead-letter topic it was read from.
    public var topic: String
    /// Its partition there.
    public var partition: Int32
    /// Its offset there.
    public var offset: Int64
    /// When it was dead-lettered (record timestamp, epoch ms).
    public var timestampMs: Int64?
    /// The original key (the card id for requests): never printed; nil in a summary.
    public var key: [UInt8]?
    /// The original value (stripped for expired Apple Pay requests): never printed raw; nil in a summary.
    public var value: [UInt8]?
    /// Headers as stored; in a summary only the `dlq.*` provenance headers, `x-replay-of` and `traceparent`.
    public var headers: [KafkaHeader]
    /// Provenance from the `dlq.*` headers (nil when they are missing or out of bounds).
    public var provenance: DeadLetterProvenance?
    /// Why `provenance` is nil: the headers are missing, or which one is out of bounds.
    public var provenanceProblem: RecordProblem?
    /// Lenient summary of the value.
    public var summary: DeadLetterSummary
    /// The key's size in bytes.
    public var keyBytes: Int
    /// The value's size in bytes.
    public var valueBytes: Int
    /// The record's header count as stored.
    public var headerCount: Int
    /// SHA-256 (hex) of the value.
    public var valueDigest: String
    /// Whether this entry is a summary (no key, no value, allowed headers only).
    public private(set) var isSummary = false
    /// For a summary read with a replay key: whether its `dlq.mac` verified on the whole record.
    public private(set) var seal: SealCheck?

    /// Reads an entry from a message.
    public init(message: KafkaMessage, deadlines: DeadlinePolicy = DeadlinePolicy()) {
        topic = message.topic
        partition = message.partition
        offset = message.offset
        timestampMs = message.timestampMs
        key = message.key
        value = message.value
        headers = message.headers
        keyBytes = message.key?.count ?? 0
        valueBytes = message.value.count
        headerCount = message.headers.count
        valueDigest = Crypto.hex(Crypto.sha256(message.value))
        switch DeadLetterProvenance.read(headers: message.headers) {
        case .success(let read): provenance = read
        case .failure(let problem): provenanceProblem = problem
        }
        summary = DeadLetterSummary(value: message.value, recordTimestampMs: provenance?.originalTimestampMs ?? message.timestampMs,
                                    deadlines: deadlines)
    }

    /// The headers a summary keeps: at most this many, each value at most `summaryHeaderValueBytes`.
    public static let summaryHeaderLimit = 32
    /// The longest header value a summary keeps (longer ones are dropped; provenance was read before).
    public static let summaryHeaderValueBytes = 2_048

    /// This entry without its body: no key or value, only the provenance headers, `x-replay-of`
    /// and `traceparent` (bounded); the seal checked first with `seal` when given.
    public func summarized(checking keys: ReplayKeyring? = nil, nowMs: Int64 = 0) -> DeadLetterEntry {
        var copy = self
        if let keys {
            switch keys.verify(self, nowMs: nowMs) {
            case .success: copy.seal = .verified
            case .failure(let problem): copy.seal = .failed(problem.reason)
            }
        }
        copy.key = nil
        copy.value = nil
        copy.headers = Array(headers.filter { header in
            (header.key.hasPrefix("dlq.") || header.key == DeadLetterHeader.replayOf || header.key == DeadLetterHeader.traceparent)
                && (header.value?.count ?? 0) <= Self.summaryHeaderValueBytes
        }.prefix(Self.summaryHeaderLimit))
        copy.isSummary = true
        return copy
    }

    /// Roughly the bytes this entry holds (its body, headers and summary texts): what a read keeps.
    public var retainedBytes: Int {
        let body = (key?.count ?? 0) + (value?.count ?? 0)
        let headerBytes = headers.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }
        return body + headerBytes + topic.utf8.count + valueDigest.utf8.count + 256
    }

    /// `topic:partition:offset`, the id `dlq show` and `x-replay-of` use.
    public var identifier: String { "\(topic):\(partition):\(offset)" }

    /// Where it lies in the dead-letter topic (to read the whole letter again).
    public var reference: ReplayReference { ReplayReference(topic: topic, partition: partition, offset: offset) }

    /// The `x-replay-of` header of this entry, when it was itself a replay that failed again (nil
    /// when the header is not a valid `ReplayReference`).
    public var replayOf: String? {
        guard let bytes = headers.last(where: { $0.key == DeadLetterHeader.replayOf })?.value, ReplayReference(bytes: bytes) != nil
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
