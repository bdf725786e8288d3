import Foundation
import Kafka
import Synchronization
import Testing
import TestSupport

/// A revoke the listener defers (`KafkaRevokeCompletion.deferred`): the member keeps its revoked
/// partitions assigned, goes on polling (and receiving the records of the partitions it keeps),
/// and the group gives the partitions to the other member only once `completeRevoke` is called —
/// what lets the worker drain a revoke without blocking its poll thread. Also the group
/// generation read from the group metadata.
@Suite("Deferred revokes and the group generation", .timeLimit(.minutes(3)))
struct KafkaDeferredRevokeTests {
    /// Defers every revoke, records what it heard and the group generation at each callback.
    final class DeferringListener: KafkaRebalanceListener {
        private let state = Mutex<(revoked: Set<TopicPartition>, generations: [Int32?])>(([], []))

        var revoked: Set<TopicPartition> { state.withLock { $0.revoked } }
        var generations: [Int32?] { state.withLock { $0.generations } }

        func partitionsAssigned(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
            let generation = consumer.groupGeneration
            state.withLock { $0.generations.append(generation) }
        }

        func partitionsRevoked(_ partitions: [TopicPartition], by consumer: KafkaConsumer) -> KafkaRevokeCompletion {
            state.withLock { $0.revoked.formUnion(partitions) }
            return .deferred
        }

        func partitionsLost(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {}
    }

    @Test("a deferred revoke keeps the partitions until completeRevoke; the member polls meanwhile; the generation rises")
    func deferredRevokeHoldsThePartitions() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic(partitions: 4)
        let group = UniqueName.make("deferred")
        let all = Set((0..<4).map { TopicPartition(topic: topic, partition: Int32($0)) })
        let settings = ["partition.assignment.strategy": "cooperative-sticky"]
        let listener = DeferringListener()
        let consumerA = try cluster.consumer(group: group, listener: listener, settings)
        let consumerB = try cluster.consumer(group: group, listener: nil, settings)
        defer { consumerA.close(); consumerB.close() }
        try consumerA.subscribe([topic])
        #expect(await Polling.until(consumerA, timeout: .seconds(30)) { Set(consumerA.assignment()) == all })
        let firstGeneration = try #require(listener.generations.last ?? nil, "no generation after the first assignment")
        #expect(consumerA.groupGeneration == firstGeneration)

        // B joins; A is told to revoke half and defers it, polling all the while.
        try consumerB.subscribe([topic])
        let pollerB = BackgroundPoller(consumerB)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 5_000) }
        let completed = Atomic<Bool>(false)
        let receivedWhileDeferred = Mutex<Set<Int32>>([])
        let outcome = await DedicatedThread.run(name: "test-poll") { () -> (heldWhileDeferred: Bool, bHadNone: Bool) in
            var deferredSince: ContinuousClock.Instant?
            var held = true, bHadNone = true
            let deadline = ContinuousClock.now.advanced(by: .seconds(60))
            while ContinuousClock.now < deadline {
                for case .success(let message) in consumerA.poll(maxMessages: 100, timeoutMs: 20) where deferredSince != nil {
                    receivedWhileDeferred.withLock { _ = $0.insert(message.partition) }
                }
                guard !listener.revoked.isEmpty else { continue }
                let since = deferredSince ?? ContinuousClock.now
                if deferredSince == nil {
                    deferredSince = since
                    // Records for every partition: A still receives those of the partitions it keeps.
                    for partition in 0..<4 {
                        try? producer.send(KafkaOutgoingMessage(topic: topic, value: [UInt8(partition)], partition: Int32(partition))) { _ in }
                    }
                }
                if ContinuousClock.now - since < .seconds(3) {
                    held = held && listener.revoked.isSubset(of: Set(consumerA.assignment()))
                    bHadNone = bHadNone && Set(consumerB.assignment()).isDisjoint(with: listener.revoked)
                } else if !completed.load(ordering: .acquiring) {
                    consumerA.completeRevoke()
                    completed.store(true, ordering: .releasing)
                } else if Set(consumerB.assignment()) == listener.revoked {
                    break
                }
            }
            return (held, bHadNone)
        }
        try await pollerB.stop()
        let revokeCompleted = completed.load(ordering: .acquiring)
        #expect(revokeCompleted, "A was never told to revoke")
        #expect(outcome.heldWhileDeferred, "the revoked partitions left A before completeRevoke")
        #expect(outcome.bHadNone, "B was given the revoked partitions before A completed its revoke")
        #expect(Set(consumerB.assignment()) == listener.revoked, "B never got them after completeRevoke: \(consumerB.assignment())")
        let kept = Set(all.subtracting(listener.revoked).map(\.partition))
        #expect(!kept.isEmpty && kept.isSubset(of: receivedWhileDeferred.withLock { $0 }),
                "A stopped receiving the records of the partitions it keeps while the revoke was deferred")
        let later = try #require(consumerA.groupGeneration)
        #expect(later > firstGeneration, "the generation did not rise with the rebalance: \(firstGeneration) → \(later)")
    }
}
