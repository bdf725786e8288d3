import Foundation
import Kafka
import Testing
import TestSupport

@Suite("Consumer groups", .timeLimit(.minutes(5)))
struct KafkaConsumerGroupTests {
    @Test("two members split the partitions, and one takes them all when the other leaves",
          arguments: [("range", "EAGER"), ("cooperative-sticky", "COOPERATIVE")])
    func splitAndTakeOver(strategy: String, expectedProtocol: String) async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 4)
        let group = UniqueName.make("group")
        let all = Set((0..<4).map { TopicPartition(topic: topic, partition: Int32($0)) })
        let listenerA = RecordingListener()
        let listenerB = RecordingListener(commitMetadataOnRevoke: "committed-on-revoke")
        let settings = ["partition.assignment.strategy": strategy]
        let consumerA = try cluster.consumer(group: group, listener: listenerA, settings)
        let consumerB = try cluster.consumer(group: group, listener: listenerB, settings)
        defer { consumerA.close(); consumerB.close() }
        try consumerA.subscribe([topic])
        try consumerB.subscribe([topic])

        @Sendable func isSplit() -> Bool {
            let a = Set(consumerA.assignment()), b = Set(consumerB.assignment())
            return !a.isEmpty && !b.isEmpty && a.isDisjoint(with: b) && a.union(b) == all
        }
        // Both members poll all along, as applications do, so every rebalance completes.
        let pollerA = BackgroundPoller(consumerA)
        let pollerB = BackgroundPoller(consumerB)
        try #require(try await Polling.wait(timeout: .seconds(30), stableFor: .seconds(1), isSplit),
                     "A has \(consumerA.assignment()), B has \(consumerB.assignment())")
        #expect(consumerA.rebalanceProtocol == expectedProtocol)
        #expect(consumerB.rebalanceProtocol == expectedProtocol)

        let partitionsOfA = Set(consumerA.assignment())
        let partitionsOfB = Set(consumerB.assignment())
        let eventsOfABefore = listenerA.events.count
        await DedicatedThread.run(name: "close-b") { consumerB.close() }
        #expect(try await Eventually.holds(within: .seconds(15)) { pollerB.isFinished })
        #expect(try await Eventually.holds(within: .seconds(20)) { Set(consumerA.assignment()) == all },
                "A has \(consumerA.assignment()) after B left")
        try await pollerA.stop()

        // B heard about the revoke before its partitions were released, and could commit there.
        #expect(listenerB.events.last == .revoked(partitionsOfB))
        #expect(listenerB.assignmentsAtRevoke.last == partitionsOfB)
        // (Only the last revoke, the one of close, counts: the mock refuses commits while a rebalance
        // is joining, so a commit in the revoke of an earlier rebalance may have been refused.)
        let commitInClose = try #require(listenerB.commitOutcomes.last)
        #expect(commitInClose == nil, "\(String(describing: commitInClose))")
        #expect(listenerB.threads.contains("close-b"), "the revoke of close runs on the closing thread")
        let committed = try consumerA.committed(Array(partitionsOfB), timeoutMs: 5_000)
        #expect(committed.count == partitionsOfB.count)
        #expect(committed.allSatisfy { $0.offset == 0 && $0.metadata == "committed-on-revoke" })

        // Eager revokes everything and assigns everything; cooperative only adds B's partitions.
        let takeOverEvents = Array(listenerA.events.dropFirst(eventsOfABefore))
        if expectedProtocol == "EAGER" {
            #expect(takeOverEvents == [.revoked(partitionsOfA), .assigned(all)])
        } else {
            #expect(takeOverEvents == [.assigned(partitionsOfB)])
        }
        #expect(listenerA.threads == ["test-poll"], "listener calls run on the polling thread")
    }
}
