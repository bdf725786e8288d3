import Contract
import Kafka

/// The provenance of a dead letter, as written in (and read back from) its `dlq.*` headers.
public struct DeadLetterProvenance: Sendable, Hashable {
    /// Topic, partition and offset the message came from.
    public var originalTopic: String
    /// Partition it came from.
    public var originalPartition: Int32
    /// Offset it came from.
    public var originalOffset: Int64
    /// Original record timestamp (epoch ms), if any.
    public var originalTimestampMs: Int64?
    /// Why it was dead-lettered.
    public var code: DeadLetterCode
    /// Redacted human-readable reason.
    public var reason: String
    /// Processing attempts made.
    public var attempts: Int
    /// First failure time (epoch ms).
    public var firstFailedAtMs: Int64
    /// Dead-lettering time (epoch ms).
    public var failedAtMs: Int64
    /// Worker that wrote it.
    public var worker: String
    /// Consumer group of the worker.
    public var group: String
    /// Whether a replay can succeed.
    public var isReplayable: Bool
    /// Why (or why not).
    public var replayableReason: String

    /// Creates provenance.
    public init(originalTopic: String, originalPartition: Int32, originalOffset: Int64, originalTimestampMs: Int64?,
                code: DeadLetterCode, reason: String, attempts: Int, firstFailedAtMs: Int64, failedAtMs: Int64,
                worker: String, group: String, isReplayable: Bool, replayableReason: String) {
        self.originalTopic = originalTopic
        self.originalPartition = originalPartition
        self.originalOffset = originalOffset
        self.originalTimestampMs = originalTimestampMs
        self.code = code
        self.reason = reason
        self.attempts = attempts
        self.firstFailedAtMs = firstFailedAtMs
        self.failedAtMs = failedAtMs
        self.worker = worker
        self.group = group
        self.isReplayable = isReplayable
        self.replayableReason = replayableReason
    }

    /// The `dlq.*` headers.
    public var headers: [KafkaHeader] {
        func header(_ name: String, _ value: String) -> KafkaHeader { KafkaHeader(key: name, value: Array(value.utf8)) }
        var headers = [
            header(DeadLetterHeader.originalTopic, originalTopic),
            header(DeadLetterHeader.originalPartition, String(originalPartition)),
            header(DeadLetterHeader.originalOffset, String(originalOffset)),
        ]
        if let originalTimestampMs { headers.append(header(DeadLetterHeader.originalTimestamp, String(originalTimestampMs))) }
        headers += [
            header(DeadLetterHeader.code, code.rawValue),
            header(DeadLetterHeader.reason, reason),
            header(DeadLetterHeader.attempts, String(attempts)),
            header(DeadLetterHeader.firstFailedAt, RFC3339.format(milliseconds: firstFailedAtMs)),
            header(DeadLetterHeader.failedAt, RFC3339.format(milliseconds: failedAtMs)),
            header(DeadLetterHeader.worker, worker),
            header(DeadLetterHeader.group, group),
            header(DeadLetterHeader.replayable, isReplayable ? "true" : "false"),
            header(DeadLetterHeader.replayableReason, replayableReason),
        ]
        return headers
    }

    /// Reads provenance from a dead letter's headers; nil when a required header is missing or
    /// any header is out of bounds (`read(headers:)` says which).
    public init?(headers: [KafkaHeader]) {
        guard case .success(let provenance) = Self.read(headers: headers) else { return nil }
        self = provenance
    }

    /// Reads provenance from a dead letter's headers, or says why it cannot: every header is
    /// bounded (a legal topic name, partition 0...Int32.max, offset ≥ 0, times within
    /// 1970-3000, attempts 1...`RecordBounds.maximumAttempt`, texts of at most 1 KiB without
    /// control characters), so a forged or damaged dead letter is refused, never replayed.
    public static func read(headers: [KafkaHeader]) -> Result<DeadLetterProvenance, RecordProblem> {
        func text(_ name: String) -> String? {
            headers.last { $0.key == name }?.value.map { String(decoding: $0, as: UTF8.self) }
        }
        func time(_ name: String) -> Int64?? {
            guard let value = text(name) else { return .some(nil) }
            guard let parsed = RFC3339.parse(value), RecordBounds.isTimestamp(parsed) else { return nil }
            return parsed
        }
        guard let topic = text(DeadLetterHeader.originalTopic), let partitionText = text(DeadLetterHeader.originalPartition),
              let offsetText = text(DeadLetterHeader.originalOffset), let code = text(DeadLetterHeader.code),
              text(DeadLetterHeader.failedAt) != nil
        else { return .failure(RecordProblem("no dlq.* provenance headers: not a dead letter this tool wrote")) }
        guard RecordBounds.isTopicName(topic) else { return .failure(RecordProblem("dlq.original.topic is not a Kafka topic name")) }
        guard let partition = Int64(partitionText), RecordBounds.partitions.contains(partition) else {
            return .failure(RecordProblem("dlq.original.partition is not 0-\(Int32.max)"))
        }
        guard let offset = Int64(offsetText), RecordBounds.isOffset(offset) else {
            return .failure(RecordProblem("dlq.original.offset is not a non-negative integer"))
        }
        var originalTimestampMs: Int64?
        if let value = text(DeadLetterHeader.originalTimestamp) {
            guard let parsed = Int64(value), RecordBounds.isTimestamp(parsed) else {
                return .failure(RecordProblem("dlq.original.timestamp is not epoch milliseconds between 1970 and 3000"))
            }
            originalTimestampMs = parsed
        }
        guard RecordBounds.isToken(code) else { return .failure(RecordProblem("dlq.code is not 1-64 of [A-Za-z0-9._:-]")) }
        guard let failedAt = time(DeadLetterHeader.failedAt), let failedAt else {
            return .failure(RecordProblem("dlq.failed_at is not an RFC 3339 time between 1970 and 3000"))
        }
        guard let firstFailedAt = time(DeadLetterHeader.firstFailedAt) else {
            return .failure(RecordProblem("dlq.first_failed_at is not an RFC 3339 time between 1970 and 3000"))
        }
        var attempts = 1
        if let value = text(DeadLetterHeader.attempts) {
            guard let parsed = Int64(value), RecordBounds.isAttempt(parsed) else {
                return .failure(RecordProblem("dlq.attempts is not 1-\(RecordBounds.maximumAttempt)"))
            }
            attempts = Int(parsed)
        }
        let names = [DeadLetterHeader.reason, DeadLetterHeader.worker, DeadLetterHeader.group, DeadLetterHeader.replayableReason]
        let texts = names.map { text($0) ?? "" }
        if let index = texts.firstIndex(where: { !RecordBounds.isText($0) }) {
            return .failure(RecordProblem("\(names[index]) is longer than \(RecordBounds.maximumTextBytes) bytes or holds control characters"))
        }
        let (reason, worker, group, replayableReason) = (texts[0], texts[1], texts[2], texts[3])
        return .success(DeadLetterProvenance(
            originalTopic: topic, originalPartition: Int32(partition), originalOffset: offset, originalTimestampMs: originalTimestampMs,
            code: DeadLetterCode(rawValue: code), reason: reason, attempts: attempts, firstFailedAtMs: firstFailedAt ?? failedAt,
            failedAtMs: failedAt, worker: worker, group: group, isReplayable: text(DeadLetterHeader.replayable) == "true",
            replayableReason: replayableReason))
    }
}
