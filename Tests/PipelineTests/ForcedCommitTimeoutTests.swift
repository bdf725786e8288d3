import Foundation
import Kafka
import Observability
@testable import Pipeline
import Synchronization
import Testing
import TestSupport

/// Forced (synchronous) commits against librdkafka's mock cluster whose coordinator stops
/// answering: the commit returns within its bound (a `.timedOut` error, counted and logged by the
/// routine), and once the coordinator answers again a commit lands and reads back.
@Suite("Forced commits against an unresponsive coordinator", .timeLimit(.minutes(3)))
struct ForcedCommitTimeoutTests {
    /// What one scenario saw, gathered on its own thread.
    struct Seen: Sendable {
        var answeredCommitted = false
        var afterAnswered: Int64?
        var unansweredCommitted = true
        var unansweredMs: Int64 = 0
        var directError: KafkaError.Code?
        var directMs: Int64 = 0
        var timeouts = 0
        var warnings: [String] = []
        var recoveredCommitted = false
        var afterRecovery: Int64?
        var failure: String?
    }

    static let boundMs: Int64 = 2_000

    @Test("a coordinator whose answers are held up (round trip 8 s): the forced commit gives up at its bound, a normal one commits")
    func slowCoordinator() async throws {
        let seen = try await Self.scenario(
            silence: { cluster, broker in cluster.setRoundTripTime(broker, milliseconds: 8_000) },
            restore: { cluster, broker in cluster.setRoundTripTime(broker, milliseconds: 0) })
        Self.check(seen)
    }

    @Test("a coordinator that is down: the forced commit gives up at its bound, and commits again once the broker is back")
    func coordinatorDown() async throws {
        let seen = try await Self.scenario(
            silence: { cluster, broker in cluster.setBrokerDown(broker) },
            restore: { cluster, broker in cluster.setBrokerUp(broker) })
        Self.check(seen)
    }

    static func check(_ seen: Seen) {
        print("forced commit: unanswered one returned after \(seen.unansweredMs) ms (bound \(boundMs) ms), the direct one after \(seen.directMs) ms (bound 500 ms)")
        #expect(seen.failure == nil, "\(seen.failure ?? "")")
        #expect(seen.answeredCommitted && seen.afterAnswered == 3, "an answered forced commit lands: \(String(describing: seen.afterAnswered))")
        #expect(!seen.unansweredCommitted, "a forced commit without an answer reports failure")
        #expect(seen.unansweredMs >= boundMs - 100 && seen.unansweredMs < boundMs + 3_000, "returned after \(seen.unansweredMs) ms (bound \(boundMs) ms)")
        #expect(seen.directError == .timedOut, "KafkaConsumer.commit(_:timeoutMs:) throws timedOut: \(String(describing: seen.directError))")
        #expect(seen.directMs < 500 + 3_000, "the direct call returned after \(seen.directMs) ms (bound 500 ms)")
        #expect(seen.timeouts == 1, "the routine counted its timeout once")
        #expect(seen.warnings.contains { $0.contains("commit timed out") }, "\(seen.warnings)")
        #expect(seen.recoveredCommitted && seen.afterRecovery == 9, "the coordinator answers again: \(String(describing: seen.afterRecovery))")
    }

    /// One consumer with an assigned partition: a forced commit answered, the coordinator
    /// silenced (`silence`), a forced commit through `CommitRoutine` and a direct bounded commit,
    /// the coordinator restored (`restore`), a commit again; each commit's time measured.
    static func scenario(silence: @escaping @Sendable (KafkaMockCluster, Int32) -> KafkaError?,
                         restore: @escaping @Sendable (KafkaMockCluster, Int32) -> KafkaError?) async throws -> Seen {
        let cluster = try KafkaMockCluster(brokers: 1)
        defer { cluster.close() }
        let broker = try #require(cluster.brokerIDs.first)
        let topic = UniqueName.make("forced-commit")
        try cluster.createTopic(topic, partitions: 1, replicationFactor: 1)
        let consumer = try KafkaConsumer(configuration: KafkaTestConfiguration.consumer(bootstrapServers: cluster.bootstrapServers,
                                                                                       group: UniqueName.make("forced-commit")),
                                         rebalanceListener: nil)
        let partition = TopicPartition(topic: topic, partition: 0)
        try consumer.assign([TopicPartitionOffset(partition, offset: TopicPartitionOffset.beginning)])
        let timeouts = Atomic<Int>(0)
        let routine = CommitRoutine(intervalMs: 100, forcedTimeoutMs: boundMs) { timeouts.add(1, ordering: .relaxed) }
        let logs = CapturingLogHandler()
        let logger = Logger(label: "test", handler: logs)
        let seen = await DedicatedThread.run(name: "test-commit") { () -> Seen in
            var seen = Seen()
            func elapsed(_ body: () -> Void) -> Int64 {
                let started = ContinuousClock.now
                body()
                let duration = ContinuousClock.now - started
                return duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
            }
            seen.answeredCommitted = routine.commitForced([TopicPartitionOffset(partition, offset: 3)], nowMs: 0, stopDeadlineMs: nil,
                                                          consumer: consumer, logger: logger, failure: "commit failed")
            seen.afterAnswered = (try? consumer.committed([partition], timeoutMs: 5_000))?.first?.offset
            if let error = silence(cluster, broker) {
                seen.failure = error.description
                return seen
            }
            seen.unansweredMs = elapsed {
                seen.unansweredCommitted = routine.commitForced([TopicPartitionOffset(partition, offset: 5)], nowMs: 0, stopDeadlineMs: nil,
                                                                consumer: consumer, logger: logger, failure: "commit failed")
            }
            seen.directMs = elapsed {
                do throws(KafkaError) {
                    try consumer.commit([TopicPartitionOffset(partition, offset: 6)], timeoutMs: 500)
                } catch {
                    seen.directError = error.code
                }
            }
            seen.timeouts = timeouts.load(ordering: .relaxed)
            seen.warnings = logs.renderedLines
            if let error = restore(cluster, broker) {
                seen.failure = error.description
                return seen
            }
            // As the routine does on its next turns: commit again until one lands. A consumer whose
            // coordinator went down answers at once `_WAIT_COORD` until it has found the coordinator
            // again; answers held up may take a few seconds. Both within a generous bound.
            let deadline = ContinuousClock.now + .seconds(30)
            var lastError: KafkaError?
            while !seen.recoveredCommitted, ContinuousClock.now < deadline {
                do throws(KafkaError) {
                    try consumer.commit([TopicPartitionOffset(partition, offset: 9)], timeoutMs: 5_000)
                    seen.recoveredCommitted = true
                } catch {
                    lastError = error
                    guard [.waitingForCoordinator, .timedOut, .coordinatorNotAvailable, .notCoordinator, .transport].contains(error.code) else { break }
                    Thread.sleep(forTimeInterval: 0.1)
                }
            }
            if !seen.recoveredCommitted {
                seen.failure = "no commit landed after the coordinator came back: \(lastError.map { $0.description } ?? "none")"
            }
            seen.afterRecovery = (try? consumer.committed([partition], timeoutMs: 10_000))?.first?.offset
            return seen
        }
        consumer.close()
        return seen
    }
}
