import Contract
import Kafka
import Recovery

/// Fuzzes every decoder of a record the worker (or the `dlq` tool) reads back from Kafka:
/// reconciliation jobs, call markers and their keys, `x-replay-of`, dead-letter provenance headers
/// and entries, results. The invariant: never trap; what decodes is within `RecordBounds` and
/// round-trips, what does not is refused.
///
/// The same bytes are read as a record value (JSON) and as a header block: one header per line,
/// `name=value` (so a seed of `dlq.*` lines lets the fuzzer mutate header values).
enum RecordFuzz {
    static func run(_ bytes: [UInt8]) {
        reconcileJob(bytes)
        callMarker(bytes)
        replayReference(bytes)
        replyRoute(bytes)
        deadLetter(bytes)
        _ = try? ProvisioningResult.decode(bytes)
    }

    private static func check(_ condition: Bool, _ message: StaticString) {
        if !condition { fatalError("\(message)") }
    }

    private static func reconcileJob(_ bytes: [UInt8]) {
        guard case .success(let job) = ReconcileJob.read(bytes) else {
            check(ReconcileJob.decode(bytes) == nil, "a refused reconciliation job decodes")
            return
        }
        check(RecordBounds.isAttempt(Int64(job.attempt)), "a decoded job's attempt is out of bounds")
        for time in [job.windowStartMs, job.deadlineMs, job.dueAtMs, job.firstIndeterminateAtMs] {
            check(RecordBounds.isTimestamp(time), "a decoded job's timestamp is out of bounds")
        }
        check(RecordBounds.isToken(job.requestID) && RecordBounds.isToken(job.program), "a decoded job's identifiers are out of bounds")
        if let reply = job.reply {
            check(reply.topic.map(RecordBounds.isTopicName) ?? true, "a decoded job's reply topic is invalid")
            check((reply.correlationID?.count ?? 0) <= ReplyRoute.maximumCorrelationBytes, "a decoded job's correlation id is too long")
        }
        if let handOver = job.handOver {
            check(handOver.markersPartition >= 0 && handOver.markersFrom >= 0, "a decoded hand-over is out of bounds")
            check(handOver.replayOf.map { ReplayReference($0) != nil } ?? true, "a decoded hand-over's replay_of is invalid")
        }
        check(ReconcileJob.decode(job.encodedJSON()) == job, "a decoded job does not round-trip")
        // What the runner computes from a job, with the default and extreme tiers.
        for tiers in [ReconcileTiers(), ReconcileTiers(delaysMs: [604_800_000])] {
            _ = tiers.dueTime(attempt: job.attempt + 1, scheduledAtMs: job.dueAtMs)
        }
        _ = DeadLetterSummary(value: bytes, recordTimestampMs: job.firstIndeterminateAtMs)
    }

    private static func callMarker(_ bytes: [UInt8]) {
        if let marker = CallMarker.decode(bytes) {
            check(RecordBounds.isToken(marker.requestID), "a decoded marker's request id is out of bounds")
            check(marker.requestOffset >= 0 && RecordBounds.isTimestamp(marker.atMs), "a decoded marker's numbers are out of bounds")
            check(marker.replayOf.map { ReplayReference($0) != nil } ?? true, "a decoded marker's replay_of is invalid")
            check(CallMarker.decode(marker.message(topic: "m", partition: 0).value ?? []) == marker, "a decoded marker does not round-trip")
        }
        if let requestID = CallMarker.requestID(fromKey: bytes) {
            check(RecordBounds.isToken(requestID), "a marker key names an invalid request id")
        }
    }

    /// The reply headers read from the bytes split in three at their first two 0x00 bytes (topic,
    /// partition, correlation id): what reads back is within bounds and round-trips through its headers.
    private static func replyRoute(_ bytes: [UInt8]) {
        let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
        let values: [String: [UInt8]] = Dictionary(uniqueKeysWithValues: zip(ReplyRoute.headerNames, parts))
        guard case .success(let route?) = ReplyRoute.read({ values[$0].map { .some($0) } }) else { return }
        check(route.topic.map(RecordBounds.isTopicName) ?? true, "a read reply topic is invalid")
        check((route.partition ?? 0) >= 0, "a read reply partition is negative")
        check((route.correlationID?.count ?? 0) <= ReplyRoute.maximumCorrelationBytes, "a read correlation id is too long")
        let written = Dictionary(uniqueKeysWithValues: route.requestHeaders.map { ($0.name, $0.value) })
        check(ReplyRoute.read({ written[$0].map { .some($0) } }) == .success(route), "a read reply route does not round-trip")
    }

    private static func replayReference(_ bytes: [UInt8]) {
        guard let reference = ReplayReference(bytes: bytes) else { return }
        check(bytes.count <= ReplayReference.maximumBytes, "an over-size x-replay-of parses")
        check(reference.partition >= 0 && reference.offset >= 0, "x-replay-of parses to negative numbers")
        check(ReplayReference(reference.description) == reference, "x-replay-of does not round-trip")
    }

    /// `name=value` lines as headers (a line without `=` is a header with a null value).
    static func headers(_ bytes: [UInt8]) -> [KafkaHeader] {
        bytes.split(separator: 0x0A, maxSplits: 64, omittingEmptySubsequences: true).map { line in
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                return KafkaHeader(key: String(decoding: line, as: UTF8.self), value: nil)
            }
            return KafkaHeader(key: String(decoding: line[..<equals], as: UTF8.self), value: Array(line[line.index(after: equals)...]))
        }
    }

    private static func deadLetter(_ bytes: [UInt8]) {
        let headers = headers(bytes)
        if case .success(let provenance) = DeadLetterProvenance.read(headers: headers) {
            check(RecordBounds.isTopicName(provenance.originalTopic), "a decoded provenance names an invalid topic")
            check(provenance.originalPartition >= 0 && provenance.originalOffset >= 0, "a decoded provenance is out of bounds")
            check(provenance.originalTimestampMs.map(RecordBounds.isTimestamp) ?? true, "a decoded provenance timestamp is out of bounds")
            check(RecordBounds.isTimestamp(provenance.failedAtMs) && RecordBounds.isTimestamp(provenance.firstFailedAtMs),
                  "a decoded provenance time is out of bounds")
            check(RecordBounds.isAttempt(Int64(provenance.attempts)), "a decoded provenance attempts is out of bounds")
            check(DeadLetterProvenance(headers: provenance.headers) == provenance, "a decoded provenance does not round-trip")
        }
        // The record timestamp is producer-set: any Int64 (the first 8 bytes), or none.
        var timestamp: Int64?
        if bytes.count >= 8 { timestamp = bytes.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) } }
        let message = KafkaMessage(topic: "provisioning.dlq", partition: 0, offset: 0, key: bytes, value: bytes, headers: headers,
                                   timestampMs: timestamp)
        let entry = DeadLetterEntry(message: message)
        check((entry.provenance == nil) != (entry.provenanceProblem == nil), "an entry has both or neither provenance and a problem")
        _ = entry.replayOf
        _ = DeadLetterFilter().matches(entry)
        if let provenance = entry.provenance {
            for now in [Int64.min, 0, 1_800_000_000_000, Int64.max] {
                _ = DeadLetterReplayPolicy.replayVerdict(provenance: provenance, summary: entry.summary, nowMs: now)
            }
        }
        for now in [Int64.min, Int64.max] { _ = entry.summary.isExpiredApplePay(nowMs: now) }
    }
}
