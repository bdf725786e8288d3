import Dispatch
import Kafka
import Observability
import Recovery
import Synchronization

/// Reads a markers partition from a position up to its end (one reader, one partition at a time,
/// on its own queue): to learn which calls a previous owner started and did not finish, and
/// whether a previous owner finished one request after all.
///
/// A marker whose value cannot be read (damaged, or a field out of bounds) is never skipped
/// silently: it is counted (`undecodable`), logged, and when its Kafka key still names a request,
/// that request counts as "the call may have started" (`InheritedMarkers.mayHaveStarted`): reconciled, never
/// called again.
final class MarkerCatchUp: Sendable {
    private let consumer: KafkaConsumer
    private let topic: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "provisioner.marker-catch-up")
    private let timeoutMs: Int64
    private let closed = Mutex(false)
    private let undecodable: Counter?

    init(properties: [String: String], topic: String, logger: Logger, timeoutMs: Int64 = 30_000,
         undecodable: Counter? = nil) throws(KafkaError) {
        let configuration = KafkaConsumerRole.reader(groupID: (properties["group.id"] ?? "provisioner") + ".marker-reader").applied(to: properties)
        consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        self.topic = topic
        self.logger = logger
        self.timeoutMs = timeoutMs
        self.undecodable = undecodable
    }

    /// How far back a catch-up reads for the duplicate horizon, and the index it fills.
    struct HorizonRead: Sendable {
        /// Markers with a record timestamp at or after this (epoch ms) are read: now minus the horizon.
        var sinceMs: Int64
        /// The duplicate horizon: an answer at `at` counts until `at + horizonMs`.
        var horizonMs: Int64
        /// The index's bound.
        var maxEntries: Int
        /// Now (epoch ms).
        var nowMs: Int64
    }

    /// Reads markers partition `partition` from `position` (its start when nil) to its end and
    /// calls `completion` with what it found: the latest state per marker key (`CallMarker.key`),
    /// where each request's markers are, and the requests of undecodable markers. With `horizon`,
    /// the read starts earlier, at the first marker written since `horizon.sinceMs` (offsets for a
    /// timestamp), and the requests answered within the horizon (`completed`, not dead-lettered)
    /// fill an `AnsweredIndex` handed to `completion` too; markers before `position` count for
    /// nothing else (their requests are committed).
    ///
    /// A read that fails (watermarks, assignment, or no progress for the timeout, as when a broker
    /// has just come back) is retried after a growing pause for as long as `stillWanted()` holds:
    /// resuming the partition without its markers would let a redelivered request reach the issuer
    /// a second time. Once `stillWanted()` is false (the partition was revoked) or the reader is
    /// closed, it gives up without calling `completion`.
    func read(partition: Int32, from position: Int64?, horizon: HorizonRead? = nil, while stillWanted: @escaping @Sendable () -> Bool,
              completion: @escaping @Sendable (InheritedMarkers, AnsweredIndex?) -> Void) {
        queue.async { [self] in
            attempt(partition: partition, from: position, horizon: horizon, number: 1, while: stillWanted, completion: completion)
        }
    }

    /// One read on the reader's queue; a failure schedules the next (other partitions' reads run meanwhile).
    private func attempt(partition: Int32, from position: Int64?, horizon: HorizonRead?, number: Int,
                         while stillWanted: @escaping @Sendable () -> Bool,
                         completion: @escaping @Sendable (InheritedMarkers, AnsweredIndex?) -> Void) {
        guard !closed.withLock({ $0 }), stillWanted() else { return }
        if let (states, answered) = readNow(partition: partition, from: position, horizon: horizon) {
            if number > 1 {
                logger.notice("marker catch-up succeeded after retries", [("partition", .integer(Int64(partition))),
                                                                          ("attempts", .integer(Int64(number)))])
            }
            completion(states, answered)
            return
        }
        // librdkafka does not refresh its metadata when a watermark query is answered
        // NOT_LEADER_FOR_PARTITION (a leader moved since this reader last looked): ask for fresh
        // metadata, or every retry would go to the old leader again.
        _ = try? consumer.partitionCount(topic: topic, timeoutMs: 2_000)
        let delayMs = min(2_000, 100 << min(number, 5))
        logger.warning("marker catch-up failed; the partition stays paused and the read is retried",
                       [("partition", .integer(Int64(partition))), ("attempt", .integer(Int64(number))),
                        ("retry_in_ms", .integer(Int64(delayMs)))])
        queue.asyncAfter(deadline: .now() + .milliseconds(delayMs)) { [self] in
            attempt(partition: partition, from: position, horizon: horizon, number: number + 1, while: stillWanted, completion: completion)
        }
    }

    /// What was read from `position` (or the horizon, when earlier) to the end, or nil when the end could not be reached.
    private func readNow(partition: Int32, from position: Int64?, horizon: HorizonRead?) -> (InheritedMarkers, AnsweredIndex?)? {
        var found = InheritedMarkers()
        var answered = horizon.map { AnsweredIndex(maxEntries: $0.maxEntries) }
        let handOverFrom = position ?? 0
        var readFrom = position
        if let horizon {
            let topicPartition = TopicPartition(topic: topic, partition: partition)
            do {
                // nil: nothing written since; the hand-over position (or the end) is early enough.
                // Without a hand-over position the whole partition is read anyway.
                if let position {
                    let since = try consumer.offset(topicPartition, atOrAfterTimestampMs: horizon.sinceMs, timeoutMs: 5_000)
                    // The record just before the answer (the last one when the answer is "none
                    // that recent") must be older than the horizon. When it is not, the broker
                    // did not search by time (librdkafka's mock cluster answers arbitrarily, or
                    // the end): read the partition whole, markers older than the horizon skipped by their time.
                    let marks = try consumer.watermarks(topicPartition, timeoutMs: 5_000)
                    let before = (since ?? marks.high) - 1
                    if before >= marks.low, let stamp = try timestamp(topicPartition, at: before), stamp >= horizon.sinceMs {
                        readFrom = nil
                    } else {
                        readFrom = since.map { min($0, position) } ?? position
                    }
                }
            } catch {
                // Read the whole partition instead: markers older than the horizon are skipped by their time.
                logger.warning("offsets for the duplicate horizon could not be looked up; reading the markers partition from its start",
                               [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
                readFrom = nil
            }
        }
        let reached = scan(partition: partition, from: readFrom, attributeFrom: handOverFrom, visit: { marker, offset in
            if offset >= handOverFrom { found.add(marker, at: offset) }
            if let horizon, marker.state == .completed, marker.outcome != .deadLettered, marker.outcome != .answeredWithoutCall {
                answered?.insert(AnsweredIndex.Fingerprint(program: marker.program, requestID: marker.requestID), expiresAtMs: marker.atMs + horizon.horizonMs, nowMs: horizon.nowMs)
            }
        }, fence: { offset, fence in
            // Every fence read counts (also before the hand-over position): more fences only mark
            // more fenced-out `started` markers, each by the same rule its writer applied.
            found.fences.append(.init(offset: offset, instance: fence.instance))
        }, unreadable: { requestID in
            found.undecodable += 1
            if let requestID { found.mayHaveStarted.insert(requestID) }
        })
        return reached ? (found, answered) : nil
    }

    /// The record timestamp of the first record at or after `offset` (nil when it has none); throws
    /// when none can be read within 5 s.
    private func timestamp(_ partition: TopicPartition, at offset: Int64) throws(KafkaError) -> Int64? {
        try consumer.assign([TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: offset, metadata: nil)])
        defer { try? consumer.assign([]) }
        let deadline = Timestamps.nowMs() + min(timeoutMs, 5_000)
        while Timestamps.nowMs() < deadline {
            for result in consumer.poll(maxMessages: 1, timeoutMs: 50) {
                if case .success(let message) = result, message.offset >= offset { return message.timestampMs }
            }
        }
        throw KafkaError(code: .timedOut, message: "reading the record at \(offset) of \(partition) timed out")
    }

    /// What a previous owner's `completed` marker says about a request.
    enum Completion: Sendable, Equatable {
        /// Its result was published.
        case answered
        /// It was dead-lettered: no result was published.
        case deadLettered
        /// No `completed` marker (yet), or the partition could not be read to its end.
        case notFound
    }

    /// A decision read (`CallMarker.isDecision`): where, and the result it decided.
    struct Decision: Sendable, Equatable {
        var offset: Int64
        var result: [UInt8]
    }

    /// What one look-up found for a marker key.
    struct LookUp: Sendable, Equatable {
        /// The previous owner's `completed` marker, if any (a new owner's `recovered` does not count).
        var completion: Completion = .notFound
        /// The first decision for the key.
        var decision: Decision?
        /// Whether a plain `completed` marker follows that decision: it was published.
        var decisionPublished = false

        /// Takes in one marker read at `offset` (in offset order): only `completed` markers that
        /// speak for `key` count (`CallMarker.Key.speaks(for:)`), and a new owner's `recovered` is
        /// not a previous owner's answer.
        mutating func add(_ marker: CallMarker, at offset: Int64, key: CallMarker.Key) {
            guard marker.key.speaks(for: key), marker.state == .completed, marker.outcome != .recovered else { return }
            completion = marker.outcome == .deadLettered ? .deadLettered : .answered
            if decision == nil, marker.isDecision, let result = marker.result {
                decision = Decision(offset: offset, result: result)
            } else if decision != nil, marker.result == nil {
                decisionPublished = true
            }
        }
    }

    /// Looks for the `completed` markers and the first decision of marker key `key`
    /// (`CallMarker.key`) in markers partition `partition`, from `position` to the end (one read,
    /// no retries). Markers of a new owner's recovery (`recovered`) are not a previous owner's answer.
    func lookUp(key: CallMarker.Key, partition: Int32, from position: Int64, completion: @escaping @Sendable (LookUp) -> Void) {
        queue.async { [self] in
            guard !closed.withLock({ $0 }) else { return completion(LookUp()) }
            var found = LookUp()
            _ = scan(partition: partition, from: position, attributeFrom: position, visit: { marker, offset in
                found.add(marker, at: offset, key: key)
            }, fence: { _, _ in }, unreadable: { _ in })
            completion(found)
        }
    }

    /// Reads markers partition `partition` from `position` (its start when nil) to its end,
    /// handing each marker and its offset to `visit`, and the request named by the key of each marker whose value
    /// cannot be read (nil when the key names none) to `unreadable`, after counting and logging it
    /// (only from `attributeFrom` on: earlier ones, read for the duplicate horizon, are skipped),
    /// and each owner's fence (`MarkerFence`) with its offset to `fence`;
    /// false when the end could not be reached (no progress for the timeout).
    private func scan(partition: Int32, from position: Int64?, attributeFrom: Int64, visit: (CallMarker, Int64) -> Void,
                      fence: (Int64, MarkerFence) -> Void, unreadable: (String?) -> Void) -> Bool {
        let topicPartition = TopicPartition(topic: topic, partition: partition)
        let marks: (low: Int64, high: Int64)
        do {
            marks = try consumer.watermarks(topicPartition, timeoutMs: 5_000)
        } catch {
            logger.error("marker read could not get watermarks",
                         [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
            return false
        }
        let start = max(marks.low, position ?? marks.low)
        guard start < marks.high else { return true }
        do {
            try consumer.assign([TopicPartitionOffset(topic: topic, partition: partition, offset: start, metadata: nil)])
        } catch {
            logger.error("marker read could not assign", [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
            return false
        }
        defer { try? consumer.assign([]) }
        // A long read (a day of markers for the duplicate horizon) goes on while it makes progress.
        var deadline = Timestamps.nowMs() + timeoutMs
        var next = start
        while next < marks.high && Timestamps.nowMs() < deadline {
            for result in consumer.poll(maxMessages: 1_000, timeoutMs: 50) {
                guard case .success(let message) = result else { continue }
                if message.offset >= next { deadline = Timestamps.nowMs() + timeoutMs }
                next = max(next, message.offset + 1)
                // A decision's result (a header) matters only from the hand-over position on.
                if let marker = message.offset >= attributeFrom ? CallMarker.decode(message.value, headers: message.headers)
                    : CallMarker.decode(message.value) {
                    visit(marker, message.offset)
                } else if message.key == nil, let record = MarkerFence.decode(message.value) {
                    fence(message.offset, record)
                } else if message.offset < attributeFrom {
                    continue
                } else {
                    let requestID = CallMarker.requestID(fromKey: message.key)
                    undecodable?.increment()
                    logger.warning(requestID == nil
                                   ? "undecodable call marker without a request key: it cannot be attributed to a request"
                                   : "undecodable call marker: its request is treated as possibly called (reconciled, never called again)",
                                   [("partition", .integer(Int64(partition))), ("offset", .integer(message.offset)),
                                    ("bytes", .integer(Int64(message.value.count)))])
                    unreadable(requestID)
                }
            }
        }
        if next < marks.high {
            logger.error("marker read timed out before the end of the partition",
                         [("partition", .integer(Int64(partition))), ("read_to", .integer(next)), ("end", .integer(marks.high))])
            return false
        }
        return true
    }

    /// Closes the reader; pending retries give up.
    func close() {
        queue.sync {
            closed.withLock { $0 = true }
            consumer.close()
        }
    }
}
