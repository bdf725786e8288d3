import Foundation
import Kafka
import Testing
import TestSupport

/// A group member using `cooperative-sticky` that is closed after its JoinGroup but before its
/// first assignment (SyncGroup) has no assignor state yet; librdkafka below 2.3.0 asserts on it
/// while destroying the client (confluentinc/librdkafka#4312, fixed by #4381) and aborts the
/// process. A worker stopped while it joins its group (a rolling deploy) or a test that closes a
/// worker right after start hits that window.
@Suite("Closing a consumer before its first assignment", .timeLimit(.minutes(2)))
struct KafkaCloseBeforeAssignmentTests {
    @Test("a cooperative-sticky member closed between JoinGroup and SyncGroup shuts down without aborting the process")
    func closedBetweenJoinAndSync() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic(partitions: 2)
        let consumer = try cluster.consumer(group: UniqueName.make("close-before-assignment"), ["partition.assignment.strategy": "cooperative-sticky"])
        try consumer.subscribe([topic])
        // Slow the coordinator down so the SyncGroup after the JoinGroup takes a while.
        #expect(cluster.cluster.setRoundTripTime(1, milliseconds: 300) == nil)
        // The join (seconds on the mock cluster) and the close (up to 5 s below 2.3.0) block: on a
        // thread of their own, not one of the test run's task threads.
        let joined = await DedicatedThread.run(name: "test-join-close") {
            let deadline = Date().addingTimeInterval(20)
            while consumer.rebalanceProtocol == "NONE" && Date() < deadline {
                _ = consumer.poll(maxMessages: 1, timeoutMs: 2)
            }
            let joined = consumer.rebalanceProtocol
            consumer.close()
            return joined
        }
        #expect(joined == "COOPERATIVE", "the member never joined")
        #expect(throws: KafkaError.self) { try consumer.subscribe([topic]) }
    }
}
