import Contract
import Kafka

/// The one maker of dead-letter records, for every path that writes one: a request the worker
/// cannot answer, a reconciliation that ran out of attempts, a reconciliation record that does not
/// read. It writes the provenance (`dlq.*` headers) and the replay verdict, and parks: a message
/// that was itself a replay (`x-replay-of`) goes to the parked topic, never replayable, so a replay
/// that fails again cannot loop. With a seal (the worker's replay key) every letter carries
/// `dlq.mac`, the MAC replay checks before it trusts anything the record says.
public struct DeadLetterBuilder: Sendable {
    /// Where a dead-lettered message was read.
    public struct Source: Sendable {
        /// Its topic and partition.
        public var partition: TopicPartition
        /// Its offset.
        public var offset: Int64
        /// Its record timestamp (epoch ms), when it had one.
        public var timestampMs: Int64?

        /// Creates a source.
        public init(partition: TopicPartition, offset: Int64, timestampMs: Int64?) {
            self.partition = partition
            self.offset = offset
            self.timestampMs = timestampMs
        }
    }

    /// A dead letter ready to produce.
    public struct Letter: Sendable {
        /// The record (to the dead-letter or the parked topic).
        public let message: KafkaOutgoingMessage
        /// What its `dlq.*` headers say.
        public let provenance: DeadLetterProvenance
        /// Whether it goes to the parked topic.
        public let isParked: Bool
    }

    let deadLetterTopic: String
    let parkedTopic: String
    let worker: String
    let group: String
    let seal: DeadLetterSeal?

    /// A builder for the worker `worker` in consumer group `group`; `seal` (the worker's replay
    /// key, nil when it has none) MACs every letter, and without it no letter can be replayed.
    public init(deadLetterTopic: String, parkedTopic: String, worker: String, group: String, seal: DeadLetterSeal?) {
        self.deadLetterTopic = deadLetterTopic
        self.parkedTopic = parkedTopic
        self.worker = worker
        self.group = group
        self.seal = seal
    }

    /// The dead letter of a message read at `source`: `value` and `headers` (those to keep) with the
    /// provenance after them, and `x-replay-of` when it was a replay (then parked, `parkedReason`
    /// saying why it cannot be replayed; else `replay` decides).
    public func letter(key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], source: Source, code: DeadLetterCode, reason: String,
                       attempts: Int, firstFailedAtMs: Int64, nowMs: Int64, replayOf: String?,
                       replay: DeadLetterReplayPolicy.Verdict, parkedReason: String) -> Letter {
        let parked = replayOf != nil
        let provenance = DeadLetterProvenance(
            originalTopic: source.partition.topic, originalPartition: source.partition.partition, originalOffset: source.offset,
            originalTimestampMs: source.timestampMs, code: code, reason: reason, attempts: attempts, firstFailedAtMs: firstFailedAtMs,
            failedAtMs: nowMs, worker: worker, group: group, isReplayable: parked ? false : replay.isReplayable,
            replayableReason: parked ? parkedReason : replay.reason)
        var all = headers + provenance.headers
        if let replayOf { all.append(KafkaHeader(key: DeadLetterHeader.replayOf, string: replayOf)) }
        if let seal { all += seal.headers(key: key, value: value, headers: all, provenance: provenance) }
        let message = KafkaOutgoingMessage(topic: parked ? parkedTopic : deadLetterTopic, key: key, value: value, headers: all)
        return Letter(message: message, provenance: provenance, isParked: parked)
    }

    /// What a dead letter keeps of the record it is about: its key and value, with two exceptions.
    /// An Apple Pay request past its deadline can never succeed, so its value loses the Apple
    /// handshake. A record over its bounds (`oversize`, given: its sizes and value digest) keeps
    /// no value, and its key only when within `bounds`: its sizes and the value's SHA-256 go in
    /// `dlq.original.*` headers instead, so its letter is a few hundred bytes whatever the record
    /// was (a letter over the producer's or the topic's record limit is never written, and the
    /// record's offset would never complete).
    public static func body(key: [UInt8]?, value: [UInt8], summary: DeadLetterSummary, oversize: KafkaMessage.Oversize?,
                            bounds: RecordBounds.Incoming, limits: RequestLimits, nowMs: Int64)
        -> (key: [UInt8]?, value: [UInt8], headers: [KafkaHeader]) {
        if let oversize {
            var headers: [KafkaHeader] = []
            if let keyBytes = oversize.keyBytes { headers.append(KafkaHeader(key: DeadLetterHeader.originalKeyBytes, string: String(keyBytes))) }
            headers += [KafkaHeader(key: DeadLetterHeader.originalValueBytes, string: String(oversize.valueBytes)),
                        KafkaHeader(key: DeadLetterHeader.originalHeaderCount, string: String(oversize.headerCount)),
                        KafkaHeader(key: DeadLetterHeader.originalHeaderBytes, string: String(oversize.headerBytes)),
                        KafkaHeader(key: DeadLetterHeader.originalValueSHA256, string: Crypto.hex(oversize.valueDigest))]
            let kept = key.flatMap { $0.count <= bounds.maxKeyBytes ? $0 : nil }
            return (kept, [], headers)
        }
        if summary.isExpiredApplePay(nowMs: nowMs), let stripped = RequestRedaction.strippingAppleHandshake(value, limits: limits) {
            return (key, stripped, [])
        }
        return (key, value, [])
    }
}
