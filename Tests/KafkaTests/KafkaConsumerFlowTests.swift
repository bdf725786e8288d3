import Foundation
import Kafka
import Synchronization
import Testing
import TestSupport

@Suite("Consumer flow control and lifecycle", .timeLimit(.minutes(5)))
struct KafkaConsumerFlowTests {
    @Test("pause stops delivery of a partition and resume restarts it where it stopped")
    func pauseAndResume() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 2)
        let paused = TopicPartition(topic: topic, partition: 0)
        let other = TopicPartition(topic: topic, partition: 1)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        let consumer = try cluster.consumer(group: UniqueName.make("group"))
        defer { consumer.close() }
        try consumer.assign([TopicPartitionOffset(paused, offset: TopicPartitionOffset.beginning),
                             TopicPartitionOffset(other, offset: TopicPartitionOffset.beginning)])

        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("before".utf8), partition: 0))
        #expect(await Polling.messages(from: consumer, count: 1).map(\.offset) == [0])

        consumer.pause([paused])
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("while-paused".utf8), partition: 0))
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("other".utf8), partition: 1))
        // The other partition keeps flowing. The paused record was written first, and with
        // fetch.wait.max.ms=10 it would arrive alongside (or within milliseconds of) the other one if
        // pause did not work: wait for the other, then keep polling a while longer.
        var duringPause = await Polling.messages(from: consumer, count: 1)
        duringPause += await Polling.messages(from: consumer, during: .milliseconds(500))
        #expect(duringPause.map(\.topicPartition) == [other])

        consumer.resume([paused])
        let afterResume = await Polling.messages(from: consumer, count: 1)
        #expect(afterResume.map(\.topicPartition) == [paused])
        #expect(afterResume.first?.offset == 1)
        #expect(afterResume.first?.value == Array("while-paused".utf8))
    }

    /// What the reconciliation runner's hold limit rests on: records `poll` returned past the
    /// limit are not held, and the paused partition is sought back to the first of them. A pause
    /// alone would resume after the last record returned; the seek must keep the partition paused
    /// and take effect on resume.
    @Test("a paused partition sought back to records poll already returned stays paused, and delivers them again on resume")
    func seekWhilePaused() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let partition = TopicPartition(topic: topic, partition: 0)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        let consumer = try cluster.consumer(group: UniqueName.make("group"))
        defer { consumer.close() }
        try consumer.assign([TopicPartitionOffset(partition, offset: TopicPartitionOffset.beginning)])
        for index in 0..<6 {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("record-\(index)".utf8), partition: 0))
        }
        #expect(await Polling.messages(from: consumer, count: 6).map(\.offset) == [0, 1, 2, 3, 4, 5])

        consumer.pause([partition])
        try consumer.seek(partition, to: 3, timeoutMs: 5_000)
        let whilePaused = await Polling.messages(from: consumer, during: .milliseconds(500))
        #expect(whilePaused.isEmpty, "the seek resumed the partition: \(whilePaused.map(\.offset))")

        consumer.resume([partition])
        let again = await Polling.messages(from: consumer, count: 3)
        #expect(again.map(\.offset) == [3, 4, 5])
        #expect(again.first?.value == Array("record-3".utf8))
    }

    /// The fetch watchdog's second remedy: a partition that a resume and a seek did not restart is
    /// given up and taken again in this member. Shown here on a partition left paused (a fetcher
    /// that delivers nothing): it delivers from the offset given, the other partition and the
    /// group's assignment are untouched, and fetching goes on afterwards.
    @Test("a partition refetched under the cooperative protocol delivers from the offset given, paused or not; the rest is untouched")
    func refetchRestartsOnePartition() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 2)
        let stuck = TopicPartition(topic: topic, partition: 0)
        let other = TopicPartition(topic: topic, partition: 1)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        let consumer = try cluster.consumer(group: UniqueName.make("group"), ["partition.assignment.strategy": "cooperative-sticky",
                                                                             "auto.offset.reset": "earliest"])
        defer { consumer.close() }
        try consumer.subscribe([topic])
        for index in 0..<6 {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("record-\(index)".utf8), partition: 0))
        }
        let first = await Polling.messages(from: consumer, count: 6, timeout: .seconds(30))
        #expect(first.map(\.offset) == [0, 1, 2, 3, 4, 5])
        #expect(Set(consumer.assignment()) == [stuck, other])
        #expect(consumer.rebalanceProtocol == "COOPERATIVE")

        consumer.pause([stuck])
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("record-6".utf8), partition: 0))
        #expect(await Polling.messages(from: consumer, during: .milliseconds(500)).isEmpty, "paused: nothing comes")

        #expect(try consumer.refetch(stuck, from: 3))
        let again = await Polling.messages(from: consumer, count: 4)
        #expect(again.map(\.offset) == [3, 4, 5, 6])
        #expect(again.allSatisfy { $0.topicPartition == stuck })
        #expect(Set(consumer.assignment()) == [stuck, other], "the assignment is the same")

        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("later-0".utf8), partition: 0))
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("later-1".utf8), partition: 1))
        let later = await Polling.messages(from: consumer, count: 2)
        #expect(Set(later.map { "\($0.partition):\($0.offset)" }) == ["0:7", "1:0"], "both partitions go on fetching")
    }

    @Test("under the eager protocol refetch does nothing and says so")
    func refetchNeedsTheCooperativeProtocol() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let partition = TopicPartition(topic: topic, partition: 0)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        let consumer = try cluster.consumer(group: UniqueName.make("group"), ["partition.assignment.strategy": "range",
                                                                             "auto.offset.reset": "earliest"])
        defer { consumer.close() }
        try consumer.subscribe([topic])
        for index in 0..<3 {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("record-\(index)".utf8), partition: 0))
        }
        #expect(await Polling.messages(from: consumer, count: 3, timeout: .seconds(30)).map(\.offset) == [0, 1, 2])
        #expect(consumer.rebalanceProtocol == "EAGER")
        #expect(try consumer.refetch(partition, from: 0) == false)
        #expect(await Polling.messages(from: consumer, during: .milliseconds(500)).isEmpty, "nothing was sought back")
    }

    @Test("close waits for a poll running on another thread; later calls report destroyed")
    func closeDuringPoll() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        // The poll runs on a thread started before the close; on a busy machine the close can
        // still begin after the poll returned (or before it began: the poll is then refused with
        // `destroyed` at once). Such a run proves nothing and is done again. A run where the close
        // began while the poll was under way shows the wait: the poll returned its empty batch
        // rather than a refusal, and close returned only after the poll had.
        var overlapped = false
        for _ in 0..<5 where !overlapped {
            let consumer = try cluster.consumer(group: UniqueName.make("group"))
            try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: TopicPartitionOffset.end)])
            let pollStartedAt = Atomic<UInt64>(0)
            let pollReturnedAt = Atomic<UInt64>(0)
            let longPoll = DedicatedThread.start(name: "long-poll") { () -> (count: Int, refused: Bool) in
                pollStartedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing)
                let batch = consumer.poll(maxMessages: 10, timeoutMs: 2_000)
                pollReturnedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing)
                let refused = batch.count == 1 && { if case .failure(let error) = batch[0] { error.code == .destroyed } else { false } }()
                return (batch.count, refused)
            }
            #expect(try await Eventually.holds(within: .seconds(15)) { pollStartedAt.load(ordering: .acquiring) != 0 })
            let close = await DedicatedThread.run(name: "closer") { () -> (startedAt: UInt64, returnedAt: UInt64) in
                let startedAt = DispatchTime.now().uptimeNanoseconds
                consumer.close()
                return (startedAt, DispatchTime.now().uptimeNanoseconds)
            }
            let polled = await longPoll.value
            let pollReturned = pollReturnedAt.load(ordering: .acquiring)
            if polled.refused || close.startedAt >= pollReturned { continue }
            overlapped = true
            #expect(polled.count == 0, "the poll during close returned \(polled.count) item(s)")
            #expect(close.returnedAt >= pollReturned, "close returned before the poll it must wait for")

            let afterClose = consumer.poll(maxMessages: 1, timeoutMs: 0)
            #expect(afterClose.count == 1)
            if case .failure(let error) = afterClose.first { #expect(error.code == .destroyed) } else { Issue.record("expected a failure") }
            #expect(throws: KafkaError.self) { try consumer.subscribe([topic]) }
            #expect(consumer.assignment().isEmpty)
            #expect(consumer.rebalanceProtocol == "NONE")
            consumer.close()
        }
        #expect(overlapped, "in five tries the close never came while the poll was under way")
    }

    @Test("consumer errors come out of poll as failures: an offset out of range with auto.offset.reset=error")
    func errorsFromPoll() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let consumer = try cluster.consumer(group: UniqueName.make("group"), ["auto.offset.reset": "error"])
        defer { consumer.close() }
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: 100)])
        let error = await DedicatedThread.run(name: "test-poll") { () -> KafkaError? in
            let deadline = ContinuousClock.now.advanced(by: .seconds(15))
            while ContinuousClock.now < deadline {
                for case .failure(let error) in consumer.poll(maxMessages: 10, timeoutMs: 20) { return error }
            }
            return nil
        }
        #expect(error?.code == .autoOffsetReset)
        #expect(error?.message.contains("\(topic)[0]") == true, "\(String(describing: error))")
    }

    @Test("partitionsLost is reported when the coordinator no longer knows the member")
    func partitionsLost() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 2)
        let listener = RecordingListener()
        let consumer = try cluster.consumer(group: UniqueName.make("group"), listener: listener)
        defer { consumer.close() }
        try consumer.subscribe([topic])
        #expect(await Polling.until(consumer, timeout: .seconds(20)) { consumer.assignment().count == 2 })

        let before = listener.events.count
        cluster.cluster.pushRequestErrors(apiKey: .heartbeat, errors: [.unknownMemberID])
        let lostSeen = await Polling.until(consumer, timeout: .seconds(20)) {
            listener.events.dropFirst(before).contains { if case .lost = $0 { true } else { false } }
        }
        #expect(lostSeen, "events: \(listener.events)")
        let afterInjection = listener.events.dropFirst(before)
        #expect(afterInjection.first == .lost(Set((0..<2).map { TopicPartition(topic: topic, partition: Int32($0)) })),
                "a lost partition is reported as lost, not revoked: \(afterInjection)")
    }
}
