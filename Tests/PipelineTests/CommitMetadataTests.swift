import Kafka
@testable import Pipeline
import Recovery
import Testing

/// The commit metadata a requests partition's next owner reads: the marker position and the
/// offsets already done past the committed one (so their decided finals are not published again).
@Suite("CommitMetadata")
struct CommitMetadataTests {
    static let partition = TopicPartition(topic: "requests", partition: 0)

    @Test("markers and done ranges survive encoding; older metadata and damaged parts read safely")
    func roundTrip() {
        let metadata = CommitMetadata(markers: 60, done: [12...14, 17...17, 20...25])
        #expect(metadata.encoded == "markers=60;done=12-14,17,20-25")
        #expect(CommitMetadata(parsing: metadata.encoded) == metadata)
        #expect(CommitMetadata(parsing: "markers=101") == CommitMetadata(markers: 101))
        #expect(CommitMetadata(parsing: nil) == CommitMetadata(markers: nil))
        #expect(CommitMetadata(parsing: "markers=7;done=5-3").done.isEmpty, "a backwards range says nothing")
        #expect(CommitMetadata(parsing: "markers=7;done=1,x").done.isEmpty, "a damaged list says nothing")
        #expect(CommitMetadata(parsing: "markers=-4").markers == nil)
        #expect(metadata.isDone(13) && metadata.isDone(17) && !metadata.isDone(15) && !metadata.isDone(11))
        let many = CommitMetadata(markers: 1, done: (0..<400).map { Int64($0 * 2)...Int64($0 * 2) })
        #expect(CommitMetadata(parsing: many.encoded).done.count == CommitMetadata.maxRanges)
        #expect((many.encoded?.utf8.count ?? 0) < 4_096, "within Kafka's default offset.metadata.max.bytes")
    }

    @Test("the tracker names the offsets done after the first one not done, as ranges")
    func trackerRanges() {
        var tracker = PartitionOffsetTracker()
        for offset in [10, 11, 12, 13, 15, 16, 17] as [Int64] { tracker.track(offset) }
        #expect(tracker.completedBeyondFrontier(limit: 10).isEmpty)
        tracker.complete(12)
        tracker.complete(13)
        tracker.complete(16)
        tracker.complete(17)
        #expect(tracker.completedBeyondFrontier(limit: 10) == [12...13, 16...17])
        #expect(tracker.completedBeyondFrontier(limit: 1) == [12...13])
        #expect(tracker.firstPending == 10)
        tracker.complete(10)
        #expect(tracker.committableOffset == 11)
        #expect(tracker.completedBeyondFrontier(limit: 10) == [12...13, 16...17])
    }

    @Test("an abandoned offset holds the commit back; the offsets done after it are committed as done, again when more are")
    func ledgerCommitsDoneOffsets() {
        let ledger = OffsetLedger()
        let generation = ledger.assign(Self.partition, markerPosition: nil)
        for offset in 0..<6 as Range<Int64> { _ = ledger.track(Self.partition, offset: offset) }
        ledger.abandon(Self.partition, offset: 0, generation: generation)
        ledger.complete(Self.partition, offset: 1, generation: generation)
        ledger.complete(Self.partition, offset: 2, generation: generation)
        let first = ledger.commitCandidates()
        #expect(first.map(\.offset) == [0], "nothing moves past the abandoned offset")
        #expect(CommitMetadata(parsing: first.first?.metadata).done == [1...2])
        ledger.committed(first)
        #expect(ledger.commitCandidates().isEmpty, "nothing new to say")
        ledger.complete(Self.partition, offset: 4, generation: generation)
        let second = ledger.commitCandidates()
        #expect(second.map(\.offset) == [0])
        #expect(CommitMetadata(parsing: second.first?.metadata).done == [1...2, 4...4])
    }
}
