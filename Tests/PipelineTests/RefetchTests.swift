import Kafka
@testable import Pipeline
import Testing

/// librdkafka (2.0.2 here; confluentinc/librdkafka#4637) can restart a partition's fetch at an
/// older position when it is resumed, so records already handed to the worker arrive again within
/// the same assignment. Seen in `sigtermMidLoad`: the second process got requests partition 0
/// offsets 13, 14, 15, then — after the catch-up pause/resume — 13, 14, 15, 16, … again; the
/// tracker held 13–15 twice, the second entries never completed, and nothing was committed on
/// that partition after every result was published.
@Suite("Records fetched again within one assignment", .timeLimit(.minutes(5)))
struct RefetchTests {
    static let partition = TopicPartition(topic: "provisioning.requests", partition: 0)

    @Test("a record fetched again after a pause/resume is not tracked twice, so the partition still commits to its end")
    func refetchedRecordsDoNotHoldTheCommitBack() throws {
        let ledger = OffsetLedger()
        let partition = Self.partition
        let generation = ledger.assign(partition, markerPosition: nil)
        for offset: Int64 in 13...15 { #expect(ledger.track(partition, offset: offset) == generation) }
        // The fetch restarts at 13: the copies of 13–15 are not handed to the flow again, 16 on are new.
        for offset: Int64 in 13...15 {
            #expect(ledger.track(partition, offset: offset) == nil, "offset \(offset) tracked twice: its second entry never completes")
        }
        for offset: Int64 in 16...24 { #expect(ledger.track(partition, offset: offset) == generation) }
        #expect(ledger.unsettledCount([partition]) == 12)
        for offset: Int64 in 13...24 { ledger.complete(partition, offset: offset, generation: generation) }
        #expect(ledger.unsettledCount([partition]) == 0)
        let commit = try #require(ledger.commitCandidates([partition]).first, "nothing committable after every offset completed")
        #expect(commit.offset == 25)
    }

    @Test("the offset tracker refuses an offset at or below the last one tracked, also after its front was dropped")
    func trackerRefusesRewoundOffsets() {
        var tracker = PartitionOffsetTracker()
        let trackedInOrder = (Int64(0)..<600).allSatisfy { tracker.track($0) }
        #expect(trackedInOrder)
        for offset in Int64(0)..<600 { tracker.complete(offset) }
        #expect(tracker.committableOffset == 600)
        let refetchedLast = tracker.track(599)
        #expect(!refetchedLast, "a completed (and dropped) offset fetched again")
        let refetchedFirst = tracker.track(0)
        #expect(!refetchedFirst)
        #expect(tracker.isDrained)
        let next = tracker.track(600)
        #expect(next)
        let twice = tracker.track(600)
        #expect(!twice, "the same offset twice")
        tracker.complete(600)
        #expect(tracker.committableOffset == 601)
        #expect(tracker.isDrained)
    }
}
