import Kafka
import Observability
@testable import Pipeline
import Synchronization
import Testing
import TestSupport

/// `CommitRoutine`'s forced (synchronous) commits, without a broker: the bound each one gets, and
/// what a commit the coordinator does not answer in time leaves (nothing recorded, counted, logged).
@Suite("CommitRoutine forced commits")
struct CommitRoutineTests {
    @Test("a forced commit waits the configured bound while running; once stopping, only what is left of the stop's budget (drain deadline plus the bound)")
    func forcedBound() {
        #expect(CommitRoutine.forcedBound(timeoutMs: 5_000, nowMs: 1_000, stopDeadlineMs: nil) == 5_000)
        #expect(CommitRoutine.forcedBound(timeoutMs: 5_000, nowMs: 1_000, stopDeadlineMs: 20_000) == 5_000, "the drain ended early: the whole bound")
        #expect(CommitRoutine.forcedBound(timeoutMs: 5_000, nowMs: 20_000, stopDeadlineMs: 20_000) == 5_000, "the drain used its bound: the commit still gets its own")
        #expect(CommitRoutine.forcedBound(timeoutMs: 5_000, nowMs: 23_500, stopDeadlineMs: 20_000) == 1_500, "an earlier commit of the stop used 3.5 s of it")
        #expect(CommitRoutine.forcedBound(timeoutMs: 5_000, nowMs: 25_000, stopDeadlineMs: 20_000) == 0, "the budget is spent: sent, not waited for")
        #expect(CommitRoutine.forcedBound(timeoutMs: 5_000, nowMs: 40_000, stopDeadlineMs: 20_000) == 0)
    }

    @Test("a forced commit the coordinator does not answer in time is not recorded, is counted and logged as a warning; the stop's budget is what it waits")
    func timedOutForcedCommit() {
        let consumer = CommitStub(answer: .failure(KafkaError(code: .timedOut, message: "no answer within the bound")))
        let timeouts = Atomic<Int>(0)
        let routine = CommitRoutine(intervalMs: 100, forcedTimeoutMs: 5_000) { timeouts.add(1, ordering: .relaxed) }
        let logs = CapturingLogHandler()
        let recorded = Mutex<[TopicPartitionOffset]>([])
        let offsets = [TopicPartitionOffset(topic: "requests", partition: 0, offset: 12)]
        routine.run(force: true, nowMs: 23_000, stopDeadlineMs: 20_000, consumer: consumer, logger: Logger(label: "test", handler: logs),
                    candidates: { offsets }, record: { committed in recorded.withLock { $0 += committed } })
        #expect(consumer.synchronousBounds == [2_000], "stopping: 2 s left of the budget that ends 5 s after the drain deadline")
        #expect(consumer.asynchronousCommits == 0)
        #expect(recorded.withLock { $0 }.isEmpty, "a commit without an answer covers nothing")
        #expect(timeouts.load(ordering: .relaxed) == 1)
        let warning = logs.records.first { $0.level == .warning }
        #expect(warning?.message.contains("commit timed out") == true, "\(logs.renderedLines)")
    }

    @Test("a forced commit that is answered is recorded; a refused one is logged, neither counted as a timeout; unforced commits stay asynchronous")
    func answeredAndRefused() {
        let timeouts = Atomic<Int>(0)
        let offsets = [TopicPartitionOffset(topic: "requests", partition: 1, offset: 7)]
        let accepted = CommitStub(answer: .success(()))
        let routine = CommitRoutine(intervalMs: 100, forcedTimeoutMs: 5_000) { timeouts.add(1, ordering: .relaxed) }
        let logs = CapturingLogHandler()
        let logger = Logger(label: "test", handler: logs)
        #expect(routine.commitForced(offsets, nowMs: 1_000, stopDeadlineMs: nil, consumer: accepted, logger: logger, failure: "refused"))
        #expect(accepted.synchronousBounds == [5_000])

        let refused = CommitStub(answer: .failure(KafkaError(code: .illegalGeneration, message: "not a member")))
        #expect(!routine.commitForced(offsets, nowMs: 1_000, stopDeadlineMs: nil, consumer: refused, logger: logger, failure: "refused"))
        #expect(timeouts.load(ordering: .relaxed) == 0)
        #expect(logs.records.map(\.message) == ["refused"])

        routine.run(force: false, nowMs: 10_000, stopDeadlineMs: nil, consumer: accepted, logger: logger, candidates: { offsets }, record: { _ in })
        #expect(accepted.asynchronousCommits == 1 && accepted.synchronousBounds == [5_000])
    }
}

/// A group consumer whose commits answer `answer` (the port's other calls are never made here).
private final class CommitStub: GroupConsumer, Sendable {
    private let answer: Result<Void, KafkaError>
    private let calls = Mutex<(bounds: [Int32], asynchronous: Int)>(([], 0))

    init(answer: Result<Void, KafkaError>) { self.answer = answer }

    var synchronousBounds: [Int32] { calls.withLock { $0.bounds } }
    var asynchronousCommits: Int { calls.withLock { $0.asynchronous } }

    func commit(_ offsets: [TopicPartitionOffset], timeoutMs: Int32) throws(KafkaError) {
        calls.withLock { $0.bounds.append(timeoutMs) }
        try answer.get()
    }

    func commitAsynchronously(_ offsets: [TopicPartitionOffset]) throws(KafkaError) {
        calls.withLock { $0.asynchronous += 1 }
    }

    func subscribe(_ topics: [String]) throws(KafkaError) {}
    func poll(maxMessages: Int, timeoutMs: Int32) -> [Result<KafkaMessage, KafkaError>] { [] }
    func pause(_ partitions: [TopicPartition]) {}
    func resume(_ partitions: [TopicPartition]) {}
    func seek(_ partition: TopicPartition, to offset: Int64, timeoutMs: Int32) throws(KafkaError) {}
    func refetch(_ partition: TopicPartition, from offset: Int64) throws(KafkaError) -> Bool { false }
    func committed(_ partitions: [TopicPartition], timeoutMs: Int32) throws(KafkaError) -> [TopicPartitionOffset] { [] }
    func watermarks(_ partition: TopicPartition, timeoutMs: Int32) throws(KafkaError) -> (low: Int64, high: Int64) { (0, 0) }
    func partitionCount(topic: String, timeoutMs: Int32) throws(KafkaError) -> Int { 1 }
    var groupGeneration: Int32? { nil }
    func completeRevoke() {}
    func close() {}
}
