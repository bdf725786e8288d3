import Contract
import Dispatch
import Kafka
import Observability
import Recovery
import Synchronization
import Testing
@testable import Pipeline

/// Marker catch-up resuming a duplicate-horizon index kept from this process's earlier assignment
/// of the partition: it reads only the markers written since, never the horizon again, and ends
/// with the answers of both.
@Suite("Duplicate horizon kept across a release: the next catch-up reads only what is new")
struct HorizonResumeTests {
    static let hour: Int64 = 3_600_000
    static let now: Int64 = 100 * hour

    /// A markers partition in memory that records what a catch-up asked of it.
    final class MarkerLog: MarkerLogReader, Sendable {
        private struct State {
            var records: [KafkaMessage] = []
            var low: Int64 = 0
            var timeLookups = 0
            var readsFrom: [Int64] = []
        }
        private let state = Mutex(State())

        func append(_ requestID: String, atMs: Int64, outcome: CallMarker.Outcome = .answered, fence: Int64? = nil) {
            let marker = CallMarker(RequestIdentity(program: "p", requestID: requestID), state: .completed, requestOffset: 0, atMs: atMs,
                                    worker: "w0", outcome: outcome, fence: fence, instance: fence.map { _ in "w0-1" })
            let outgoing = marker.message(topic: "markers", partition: 0)
            state.withLock { state in
                state.records.append(KafkaMessage(topic: "markers", partition: 0, offset: Int64(state.records.count), key: outgoing.key,
                                                  value: outgoing.value ?? [], headers: outgoing.headers, timestampMs: atMs))
            }
        }

        /// Appends `message` (a marker or a fence) as the next record.
        func append(_ message: KafkaOutgoingMessage, atMs: Int64) {
            state.withLock { state in
                state.records.append(KafkaMessage(topic: "markers", partition: 0, offset: Int64(state.records.count), key: message.key,
                                                  value: message.value ?? [], headers: message.headers, timestampMs: atMs))
            }
        }

        /// Deletes records below `offset`, as retention does.
        func truncate(below offset: Int64) { state.withLock { $0.low = offset } }
        var timeLookups: Int { state.withLock { $0.timeLookups } }
        var readsFrom: [Int64] { state.withLock { $0.readsFrom } }
        var end: Int64 { state.withLock { Int64($0.records.count) } }

        func watermarks(partition: Int32) throws(KafkaError) -> (low: Int64, high: Int64) {
            state.withLock { ($0.low, Int64($0.records.count)) }
        }

        func offset(partition: Int32, atOrAfterTimestampMs timestampMs: Int64) throws(KafkaError) -> Int64? {
            state.withLock { state in
                state.timeLookups += 1
                return state.records.first { $0.offset >= state.low && ($0.timestampMs ?? 0) >= timestampMs }?.offset
            }
        }

        func timestamp(partition: Int32, at offset: Int64) throws(KafkaError) -> Int64? {
            state.withLock { state in offset >= state.low && offset < Int64(state.records.count) ? state.records[Int(offset)].timestampMs : nil }
        }

        func read(partition: Int32, from: Int64, upTo: Int64, stallMs: Int64, limitMs: Int64, visit: (KafkaMessage) -> Void) -> Int64 {
            let records = state.withLock { state in
                state.readsFrom.append(from)
                return Array(state.records[Int(max(from, state.low))..<Int(min(upTo, Int64(state.records.count)))])
            }
            records.forEach(visit)
            return max(from, upTo)
        }

        func refreshMetadata() {}
        func close() {}
    }

    static let partition = TopicPartition(topic: "requests", partition: 0)

    /// One catch-up of markers partition 0 from `position` with `read`, waited for: its answers go
    /// to `horizon`, which then holds the partition as owned; returns the offset they are complete up to.
    static func catchUp(_ log: MarkerLog, from position: Int64, horizon: DuplicateHorizon, read: MarkerHorizonRead) throws -> Int64 {
        let catchUp = MarkerCatchUp(reader: log, queue: DispatchExecutor().serialQueue(label: "horizon-resume-test", onPool: false),
                                    logger: Logger(label: "horizon-resume", minimumLevel: .error, handler: DiscardingLogHandler()))
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Int64?>(nil)
        catchUp.read(partition: 0, from: position, horizon: read, answers: { horizon.add($0, nowMs: now) }, while: { true }) { _, readThrough in
            result.withLock { $0 = readThrough }
            done.signal()
        }
        done.wait()
        let readThrough = try #require(result.withLock { $0 })
        horizon.install(partition, readThrough: readThrough)
        return readThrough
    }

    static func answered(_ horizon: DuplicateHorizon, _ requestID: String) -> Bool {
        horizon.contains(RequestIdentity(program: "p", requestID: requestID), in: partition, nowMs: now)
    }

    static func horizon() -> DuplicateHorizon { DuplicateHorizon(horizonMs: hour, maxBytes: 1 << 20, shares: ["p": 1]) }

    @Test("re-assigned to the same process: no horizon look-up, the read starts where the kept answers ended, answers since then added")
    func resumesWhereItEnded() throws {
        let log = MarkerLog()
        log.append("too-old", atMs: Self.now - 2 * Self.hour)
        for id in ["a", "b", "c"] { log.append(id, atMs: Self.now - Self.hour / 2) }
        let horizon = Self.horizon()

        // First assignment: the horizon is looked up by time and read.
        let first = try Self.catchUp(log, from: log.end, horizon: horizon, read: horizon.read(Self.partition, nowMs: Self.now))
        #expect(log.timeLookups == 1 && first == 4)
        #expect(["a", "b", "c"].allSatisfy { Self.answered(horizon, $0) } && !Self.answered(horizon, "too-old"))

        // Released (an eager rebalance); meanwhile another owner answers "d".
        horizon.remove([Self.partition], nowMs: Self.now)
        log.append("d", atMs: Self.now)
        let second = try Self.catchUp(log, from: log.end, horizon: horizon, read: horizon.read(Self.partition, nowMs: Self.now + 1_000))
        #expect(log.timeLookups == 1, "the kept answers spare the horizon look-up")
        #expect(log.readsFrom.last == 4, "only the markers after the kept answers' end are read")
        #expect(second == 5 && ["a", "b", "c", "d"].allSatisfy { Self.answered(horizon, $0) })
    }

    @Test("answers without a call count once published (their plain completed marker), never by a decision alone, which may have been withdrawn")
    func answersWithoutCall() throws {
        let log = MarkerLog()
        log.append("published", atMs: Self.now - 1_000, outcome: .answeredWithoutCall)
        log.append("decided-only", atMs: Self.now - 1_000, outcome: .answeredWithoutCall, fence: 0)
        log.append("dead", atMs: Self.now - 1_000, outcome: .deadLettered)
        let horizon = Self.horizon()
        _ = try Self.catchUp(log, from: log.end, horizon: horizon, read: horizon.read(Self.partition, nowMs: Self.now))
        #expect(Self.answered(horizon, "published"), "a published answer without a call: a copy produced again is a duplicate")
        #expect(!Self.answered(horizon, "decided-only"), "a decision without a call alone may have been withdrawn by a newer owner's fence")
        #expect(!Self.answered(horizon, "dead"))
    }

    @Test("a kept read position the partition no longer matches (records deleted past it, or a recreated topic) is not resumed")
    func fallsBackWhenTheLogMoved() throws {
        let log = MarkerLog()
        for id in ["a", "b", "c", "d"] { log.append(id, atMs: Self.now - Self.hour / 2) }
        let horizon = Self.horizon()
        var read = horizon.read(Self.partition, nowMs: Self.now)
        read.keptReadThrough = 2
        log.truncate(below: 3)
        _ = try Self.catchUp(log, from: log.end, horizon: horizon, read: read)
        #expect(log.timeLookups == 1, "records below the low watermark were deleted after the kept end: the horizon is read again")
        read.keptReadThrough = 9
        let fresh = Self.horizon()
        _ = try Self.catchUp(log, from: log.end, horizon: fresh, read: read)
        #expect(log.timeLookups == 2, "an end beyond the partition's: a recreated topic")
        #expect(Self.answered(fresh, "d"))
    }

    @Test("a day's catch-up hands its answers over in batches: what it holds meanwhile is bounded")
    func answersInBatches() throws {
        let log = MarkerLog()
        let count = 2 * MarkerCatchUp.answerBatch + 7
        for number in 0..<count { log.append("r\(number)", atMs: Self.now - Self.hour / 2) }
        let batches = Mutex<[Int]>([])
        let catchUp = MarkerCatchUp(reader: log, queue: DispatchExecutor().serialQueue(label: "horizon-batches", onPool: false),
                                    logger: Logger(label: "horizon-batches", minimumLevel: .error, handler: DiscardingLogHandler()))
        let done = DispatchSemaphore(value: 0)
        catchUp.read(partition: 0, from: log.end, horizon: Self.horizon().read(Self.partition, nowMs: Self.now),
                     answers: { answers in batches.withLock { $0.append(answers.count) } }, while: { true }) { _, _ in done.signal() }
        done.wait()
        let sizes = batches.withLock { $0 }
        #expect(sizes.reduce(0, +) == count && sizes.allSatisfy { $0 <= MarkerCatchUp.answerBatch }, "\(sizes)")
    }
}
