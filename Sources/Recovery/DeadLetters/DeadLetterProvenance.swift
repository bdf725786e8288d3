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

    /// Reads provenance from a dead letter's headers; nil when a required header is missing.
    public init?(headers: [KafkaHeader]) {
        func text(_ name: String) -> String? {
            headers.last { $0.key == name }?.value.map { String(decoding: $0, as: UTF8.self) }
        }
        guard let topic = text(DeadLetterHeader.originalTopic),
              let partition = text(DeadLetterHeader.originalPartition).flatMap({ Int32($0) }),
              let offset = text(DeadLetterHeader.originalOffset).flatMap({ Int64($0) }),
              let code = text(DeadLetterHeader.code),
              let failedAt = text(DeadLetterHeader.failedAt).flatMap(RFC3339.parse)
        else { return nil }
        self.init(originalTopic: topic, originalPartition: partition, originalOffset: offset,
                  originalTimestampMs: text(DeadLetterHeader.originalTimestamp).flatMap { Int64($0) },
                  code: DeadLetterCode(rawValue: code), reason: text(DeadLetterHeader.reason) ?? "",
                  attempts: text(DeadLetterHeader.attempts).flatMap { Int($0) } ?? 1,
                  firstFailedAtMs: text(DeadLetterHeader.firstFailedAt).flatMap(RFC3339.parse) ?? failedAt,
                  failedAtMs: failedAt, worker: text(DeadLetterHeader.worker) ?? "",
                  group: text(DeadLetterHeader.group) ?? "",
                  isReplayable: text(DeadLetterHeader.replayable) == "true",
                  replayableReason: text(DeadLetterHeader.replayableReason) ?? "")
    }
}
