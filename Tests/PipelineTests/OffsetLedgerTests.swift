import Kafka
@testable import Pipeline
import Testing

/// The `OffsetLedger` as the reconciliation loop uses it (no markers): asking before tracking,
/// a revoke's drain over abandoned and completed jobs, commits without marker metadata.
@Suite("OffsetLedger without markers")
struct OffsetLedgerTests {
    let partition = TopicPartition(topic: "provisioning.reconcile", partition: 2)

    @Test("accepts asks without tracking: a refused record is fetched again and then tracked once")
    func acceptsDoesNotTrack() {
        let ledger = OffsetLedger()
        #expect(!ledger.accepts(partition, offset: 0), "a partition never assigned accepts nothing")
        let generation = ledger.assign(partition, markerPosition: nil)
        #expect(ledger.accepts(partition, offset: 5))
        #expect(ledger.accepts(partition, offset: 5), "asking twice still accepts: nothing was tracked")
        #expect(ledger.unsettledCount([partition]) == 0)
        #expect(ledger.track(partition, offset: 5) == generation)
        #expect(!ledger.accepts(partition, offset: 5), "a tracked offset is not accepted again")
        #expect(ledger.accepts(partition, offset: 6))
    }

    @Test("a revoked partition accepts nothing and is held until released")
    func revokedIsHeldUntilReleased() {
        let ledger = OffsetLedger()
        _ = ledger.assign(partition, markerPosition: nil)
        ledger.revoke([partition])
        #expect(!ledger.accepts(partition, offset: 0))
        #expect(ledger.holds(partition))
        ledger.release([partition])
        #expect(!ledger.holds(partition))
    }

    @Test("a revoke's drain ends once running jobs complete and dropped ones are abandoned; only completed ones commit")
    func drainOverAbandonedAndCompleted() {
        let ledger = OffsetLedger()
        let generation = ledger.assign(partition, markerPosition: nil)
        for offset: Int64 in 0...3 { #expect(ledger.track(partition, offset: offset) == generation) }
        ledger.revoke([partition])
        ledger.complete(partition, offset: 0, generation: generation)
        ledger.complete(partition, offset: 1, generation: generation)
        ledger.abandon(partition, offset: 2, generation: generation)
        #expect(ledger.unsettledCount([partition]) == 1, "offset 3 is still running")
        ledger.abandon(partition, offset: 3, generation: generation)
        #expect(ledger.unsettledCount([partition]) == 0)
        let commit = ledger.commitCandidates([partition])
        #expect(commit.map(\.offset) == [2], "the commit must stop at the abandoned offset 2 (redelivered): \(commit.map(\.offset))")
        #expect(commit.first?.metadata == nil, "no marker position known, so no metadata")
    }
}
