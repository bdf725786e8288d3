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
    private let reader: any MarkerLogReader
    private let logger: Logger
    private let queue: any WorkQueue
    private let timeoutMs: Int64
    private let closed = Mutex(false)
    private let undecodable: Counter?
    /// A look-up judges a decision without a call by the fences read from the look-up's position
    /// only (those before it, since the decision's writer took the partition, are missed).
    private let fencesFromPositionOnly: Bool
    /// A catch-up takes the first decision it reads for a request as the request's first, even
    /// when an earlier decision lies before the hand-over position.
    private let firstDecisionReadOnly: Bool
    /// A catch-up counts no answer without a call for the duplicate horizon.
    private let withoutCallOutOfHorizon: Bool

    /// A catch-up reading through `reader` on `queue` (serial: the reader is used there only); a
    /// read that makes no progress for `timeoutMs` fails (and is retried).
    init(reader: any MarkerLogReader, queue: any WorkQueue, logger: Logger, timeoutMs: Int64 = 30_000, undecodable: Counter? = nil,
         fencesFromPositionOnly: Bool = false, firstDecisionReadOnly: Bool = false, withoutCallOutOfHorizon: Bool = false) {
        self.reader = reader
        self.queue = queue
        self.logger = logger
        self.timeoutMs = timeoutMs
        self.undecodable = undecodable
        self.fencesFromPositionOnly = fencesFromPositionOnly
        self.firstDecisionReadOnly = firstDecisionReadOnly
        self.withoutCallOutOfHorizon = withoutCallOutOfHorizon
    }

    /// How many answers a catch-up hands over at a time (`answers`): what it holds meanwhile.
    static let answerBatch = 4_096

    /// Reads markers partition `partition` from `position` (its start when nil) to its end and
    /// calls `completion` with what it found: the latest state per marker key (`CallMarker.key`),
    /// where each request's markers are, and the requests of undecodable markers. With `horizon`,
    /// the read starts earlier, at the first marker written since `horizon.sinceMs` (offsets for a
    /// timestamp), and the requests answered within the horizon (`completed`, not dead-lettered)
    /// go to `answers` as they are read, in batches (`answerBatch`), and `completion` is handed the
    /// markers offset they are complete up to; markers before `position` count for nothing else
    /// (their requests are committed).
    ///
    /// A read that fails (watermarks, assignment, or no progress for the timeout, as when a broker
    /// has just come back) is retried after a growing pause for as long as `stillWanted()` holds:
    /// resuming the partition without its markers would let a redelivered request reach the issuer
    /// a second time. Once `stillWanted()` is false (the partition was revoked) or the reader is
    /// closed, it gives up without calling `completion`.
    func read(partition: Int32, from position: Int64?, horizon: MarkerHorizonRead? = nil,
              answers: @escaping @Sendable ([DuplicateHorizon.Answer]) -> Void = { _ in },
              while stillWanted: @escaping @Sendable () -> Bool,
              completion: @escaping @Sendable (InheritedMarkers, _ horizonReadThrough: Int64?) -> Void) {
        queue.async { [self] in
            attempt(partition: partition, from: position, horizon: horizon, answers: answers, number: 1, while: stillWanted, completion: completion)
        }
    }

    /// One read on the reader's queue; a failure schedules the next (other partitions' reads run meanwhile).
    private func attempt(partition: Int32, from position: Int64?, horizon: MarkerHorizonRead?,
                         answers: @escaping @Sendable ([DuplicateHorizon.Answer]) -> Void, number: Int,
                         while stillWanted: @escaping @Sendable () -> Bool,
                         completion: @escaping @Sendable (InheritedMarkers, Int64?) -> Void) {
        guard !closed.withLock({ $0 }), stillWanted() else { return }
        if let (states, answered) = readNow(partition: partition, from: position, horizon: horizon, answers: answers) {
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
        reader.refreshMetadata()
        let delayMs = min(2_000, 100 << min(number, 5))
        logger.warning("marker catch-up failed; the partition stays paused and the read is retried",
                       [("partition", .integer(Int64(partition))), ("attempt", .integer(Int64(number))),
                        ("retry_in_ms", .integer(Int64(delayMs)))])
        queue.asyncAfter(milliseconds: Int64(delayMs)) { [self] in
            attempt(partition: partition, from: position, horizon: horizon, answers: answers, number: number + 1, while: stillWanted,
                    completion: completion)
        }
    }

    /// What was read from `position` (or the horizon, when earlier) to the end, and with a horizon
    /// the end its answers are complete up to; nil when the end could not be reached (answers
    /// handed over already are true all the same).
    private func readNow(partition: Int32, from position: Int64?, horizon: MarkerHorizonRead?,
                         answers: @Sendable ([DuplicateHorizon.Answer]) -> Void) -> (InheritedMarkers, Int64?)? {
        var found = InheritedMarkers()
        var batch: [DuplicateHorizon.Answer] = []
        let handOverFrom = position ?? 0
        let readFrom = horizon.map { $0.start(partition: partition, handOverPosition: position, reader: reader, logger: logger) } ?? position
        var attributed: [(marker: CallMarker, offset: Int64)] = []
        // Where each request's first decision before the hand-over position lies: a decision read
        // after the position is then not the request's first (a losing attempt's, written before
        // it learnt of the earlier one), and the first is looked up from there.
        var decidedBefore: [CallMarker.Key: Int64] = [:]
        let end = scan(partition: partition, from: readFrom, attributeFrom: handOverFrom, decidedEarly: { key, offset in
            if decidedBefore[key] == nil { decidedBefore[key] = offset }
        }, visit: { marker, offset in
            if offset >= handOverFrom { attributed.append((marker, offset)) }
            // A decision without a call (it carries its writer's fence) may have been withdrawn
            // (written after a newer owner's fence, which this read may not reach): only the
            // plain `completed` marker written once it was published counts for the horizon.
            if let horizon, marker.state == .completed, marker.outcome != .deadLettered,
               !(marker.outcome == .answeredWithoutCall && (marker.fence != nil || withoutCallOutOfHorizon)) {
                batch.append(.init(program: marker.program,
                                   fingerprint: AnsweredIndex.Fingerprint(program: marker.program, requestID: marker.requestID, partition: partition),
                                   expiresAtMs: marker.atMs + horizon.horizonMs))
                if batch.count >= Self.answerBatch {
                    answers(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }, fence: { offset, fence in
            // Every fence read counts (also before the hand-over position): more fences only mark
            // more fenced-out `started` markers, each by the same rule its writer applied.
            found.fences.append(.init(offset: offset, fence))
        }, unreadable: { offset, requestID in
            found.undecodable += 1
            found.firstUndecodable = min(found.firstUndecodable ?? offset, offset)
            if let requestID { found.mayHaveStarted.insert(requestID) }
        })
        answers(batch)
        guard let end else { return nil }
        // Each marker is judged by every fence since its writer's epoch, which may lie before this read.
        guard let earlier = earlierFences(partition: partition, before: readFrom ?? 0, markers: attributed) else { return nil }
        found.fences = earlier + found.fences
        for (marker, offset) in attributed { found.add(marker, at: offset) }
        for key in found.decisions.keys {
            guard !firstDecisionReadOnly, let from = decidedBefore[key] else { continue }
            guard let first = lookUpNow(key: key, partition: partition, from: from) else { return nil }
            found.decisions[key] = first.decision?.result
            if first.decisionPublished { found.published.insert(key) }
        }
        return (found, horizon == nil ? nil : end)
    }

    /// Looks for the `completed` markers and the first decision of marker key `key`
    /// (`CallMarker.key`) in markers partition `partition`, from `position` to the end (one read,
    /// no retries). Markers of a new owner's recovery (`recovered`) are not a previous owner's answer.
    ///
    /// A decision without a call counts only if no newer owner's fence lies between its writer's
    /// epoch and it, and that epoch may lie before `position` (a zombie that took the partition
    /// before the caller whose `started` marker the look-up starts at): then the fences from the
    /// earliest such epoch up to `position` are read too, so every reader judges it alike.
    func lookUp(key: CallMarker.Key, partition: Int32, from position: Int64, completion: @escaping @Sendable (MarkerLookUp) -> Void) {
        queue.async { [self] in
            guard !closed.withLock({ $0 }) else { return completion(MarkerLookUp()) }
            // Unreadable: nothing found, so a decision is looked for again (never judged on part of the fences).
            completion(lookUpNow(key: key, partition: partition, from: position) ?? MarkerLookUp())
        }
    }

    /// `lookUp` over all that markers partition `partition` retains (from its low watermark), for
    /// an operator's replay: its original may have been decided long before any position this
    /// worker holds. nil when the partition could not be read.
    func lookUpRetained(key: CallMarker.Key, partition: Int32, completion: @escaping @Sendable (MarkerLookUp?) -> Void) {
        queue.async { [self] in
            guard !closed.withLock({ $0 }), let low = try? reader.watermarks(partition: partition).low else { return completion(nil) }
            completion(lookUpNow(key: key, partition: partition, from: low))
        }
    }

    /// `lookUp` on the reader's queue; nil when the partition could not be read.
    private func lookUpNow(key: CallMarker.Key, partition: Int32, from position: Int64) -> MarkerLookUp? {
        var markers: [(marker: CallMarker, offset: Int64)] = []
        var fences: [InheritedMarkers.Fence] = []
        let end = scan(partition: partition, from: position, attributeFrom: position, visit: { marker, offset in
            if marker.key.speaks(for: key) { markers.append((marker, offset)) }
        }, fence: { offset, fence in
            fences.append(.init(offset: offset, fence))
        }, unreadable: { _, _ in })
        guard end != nil, let earlier = earlierFences(partition: partition, before: position, markers: markers) else { return nil }
        var found = MarkerLookUp()
        found.fences = earlier + fences
        for (marker, offset) in markers { found.add(marker, at: offset, key: key) }
        return found
    }

    /// The fences before `position` that can judge `markers` (read from `position` on): those after
    /// the earliest epoch of a marker that counts only if its writer was not fenced out
    /// (`InheritedMarkers.countsOnlyIfNotFencedOut`); none when every such epoch is at or after
    /// `position`; nil when they could not be read.
    private func earlierFences(partition: Int32, before position: Int64,
                               markers: [(marker: CallMarker, offset: Int64)]) -> [InheritedMarkers.Fence]? {
        let epochs = markers.compactMap { InheritedMarkers.countsOnlyIfNotFencedOut($0.marker) ? $0.marker.fence : nil }
        guard !fencesFromPositionOnly, let earliest = epochs.min(), earliest < position else { return [] }
        var earlier: [InheritedMarkers.Fence] = []
        let reached = scan(partition: partition, from: earliest, until: position, attributeFrom: .max, visit: { _, _ in }, fence: { offset, fence in
            earlier.append(.init(offset: offset, fence))
        }, unreadable: { _, _ in })
        return reached == nil ? nil : earlier
    }

    /// Reads markers partition `partition` from `position` (its start when nil) to its end (or to `until`),
    /// handing each marker and its offset to `visit`, and the offset and request named by the key of each marker whose value
    /// cannot be read (nil when the key names none) to `unreadable`, after counting and logging it
    /// (only from `attributeFrom` on: earlier ones, read for the duplicate horizon, are skipped),
    /// and each owner's fence (`MarkerFence`) with its offset to `fence`; returns the end reached
    /// (the high watermark read first), nil when it could not be reached (no progress for the timeout).
    @discardableResult
    private func scan(partition: Int32, from position: Int64?, until: Int64? = nil, attributeFrom: Int64,
                      decidedEarly: (CallMarker.Key, Int64) -> Void = { _, _ in },
                      visit: (CallMarker, Int64) -> Void, fence: (Int64, MarkerFence) -> Void,
                      unreadable: (Int64, String?) -> Void) -> Int64? {
        var marks: (low: Int64, high: Int64)
        do {
            marks = try reader.watermarks(partition: partition)
            if let until { marks.high = min(marks.high, until) }
        } catch {
            logger.error("marker read could not get watermarks",
                         [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
            return nil
        }
        let start = max(marks.low, position ?? marks.low)
        guard start < marks.high else { return marks.high }
        // A long read (a day of markers for the duplicate horizon) goes on while it makes progress.
        let next = reader.read(partition: partition, from: start, upTo: marks.high, stallMs: timeoutMs, limitMs: .max) { message in
            // A decision's result (a header) matters only from the hand-over position on.
            if let marker = message.offset >= attributeFrom ? CallMarker.decode(message.value, headers: message.headers)
                : CallMarker.decode(message.value) {
                if message.offset < attributeFrom, marker.state == .completed,
                   message.headers.contains(where: { $0.key == CallMarker.decisionHeader }) {
                    decidedEarly(marker.key, message.offset)
                }
                visit(marker, message.offset)
            } else if message.key == nil, let record = MarkerFence.decode(message.value) {
                fence(message.offset, record)
            } else if message.offset >= attributeFrom {
                let requestID = CallMarker.requestID(fromKey: message.key)
                undecodable?.increment()
                logger.warning(requestID == nil
                               ? "undecodable call marker without a request key: it cannot be attributed to a request"
                               : "undecodable call marker: its request is treated as possibly called (reconciled, never called again)",
                               [("partition", .integer(Int64(partition))), ("offset", .integer(message.offset)),
                                ("bytes", .integer(Int64(message.value.count)))])
                unreadable(message.offset, requestID)
            }
        }
        if next < marks.high {
            logger.error("marker read timed out before the end of the partition",
                         [("partition", .integer(Int64(partition))), ("read_to", .integer(next)), ("end", .integer(marks.high))])
            return nil
        }
        return marks.high
    }

    /// Closes the reader; pending retries give up.
    func close() {
        queue.sync {
            closed.withLock { $0 = true }
            reader.close()
        }
    }
}
