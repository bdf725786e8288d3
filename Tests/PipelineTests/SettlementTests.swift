import Contract
import Kafka
import Observability
import Recovery
import Synchronization
import Testing
@testable import Pipeline

/// Settlement: the table every exit goes through, and `Settler` carrying it out on the
/// real in-memory bookkeeping (duplicate filter, offset ledger, duplicate horizon) with the
/// marker write reported by hand. No broker.
@Suite("Settlement", .timeLimit(.minutes(1)))
struct SettlementTests {
    static let partition = TopicPartition(topic: "provisioning.requests", partition: 1)
    static let now: Int64 = 1_796_000_000_000

    /// The identity of request `requestID` (of one program).
    static func id(_ requestID: String) -> RequestIdentity { RequestIdentity(program: "settled", requestID: requestID) }

    @Test("the table: what each exit does to the marker, the claim and the offset")
    func table() {
        typealias S = Settlement
        func row(_ exit: RecordExit, claimed: Bool) -> (CallMarker.Outcome?, Bool, S.Claim, S.Offset) {
            let s = Settlement(exit, claimed: claimed)
            return (s.completedMarker, s.recordsInHorizon, s.claim, s.offset)
        }
        // Answered: a completed marker, into the horizon, the id finished (claimed or not: it is answered).
        // Answered after a call: a completed marker, into the horizon, the id finished.
        #expect(row(.answered(recovered: false, afterCall: true), claimed: true) == (.answered, true, .finish, .complete))
        #expect(row(.answered(recovered: true, afterCall: true), claimed: true) == (.recovered, true, .finish, .complete))
        // Answered without a call: a completed marker, into the horizon (a copy produced again is a duplicate anywhere).
        #expect(row(.answered(recovered: false, afterCall: false), claimed: true) == (.answeredWithoutCall, true, .finish, .complete))
        // An answer that claimed nothing (an early rejection naming some id) touches nothing that id depends on.
        #expect(row(.answered(recovered: false, afterCall: false), claimed: false) == (nil, false, .untouched, .complete))
        // Decided: the decision marker written before the result is its `completed` marker; none more.
        #expect(row(.decided(afterCall: true), claimed: true) == (.answered, true, .finish, .complete))
        #expect(!Settlement(.decided(afterCall: true), claimed: true).awaitsMarker, "the marker after a decision does not hold the offset back")
        #expect(row(.decided(afterCall: false), claimed: true) == (.answeredWithoutCall, true, .finish, .complete),
                "a decided answer without a call is in the duplicate horizon like any answer")
        // Without a call the decision carries its writer's fence and does not count for the horizon
        // read at catch-up: the offset waits for the plain marker, or a commit passes the request while
        // no marker says it was answered and a copy produced again is called by the next owner.
        #expect(Settlement(.decided(afterCall: false), claimed: true).awaitsMarker,
                "the marker after a decision without a call holds the offset back until acknowledged")
        #expect(Settlement(.answered(recovered: false, afterCall: true), claimed: true).awaitsMarker)
        // Dead-lettered: a completed marker only after a started one; the claim released so a replay runs.
        #expect(row(.deadLettered(afterStartedMarker: true), claimed: true) == (.deadLettered, false, .release, .complete))
        #expect(row(.deadLettered(afterStartedMarker: false), claimed: true) == (nil, false, .release, .complete))
        // A message that claimed nothing (malformed, unauthentic) never frees the id it names.
        #expect(row(.deadLettered(afterStartedMarker: false), claimed: false) == (nil, false, .untouched, .complete))
        #expect(row(.duplicate, claimed: true) == (nil, false, .finish, .complete))
        #expect(row(.duplicate, claimed: false) == (nil, false, .untouched, .complete))
        // Abandoned: never completed here; the next owner redoes it.
        #expect(row(.abandoned, claimed: true) == (nil, false, .release, .abandon))
        #expect(row(.abandoned, claimed: false) == (nil, false, .untouched, .abandon))
    }

    /// A settler over fresh in-memory parts; marker writes are answered by `markerAnswer`.
    final class Rig: Sendable {
        let duplicates = DuplicateFilter(horizonMs: 60_000)
        let ledger = OffsetLedger()
        let horizon = DuplicateHorizon(horizonMs: 60_000, maxBytes: 1 << 20, shares: [:])
        let written = Mutex<[CallMarker]>([])
        /// Slots freed, with the breaker verdict each was freed with.
        let released = Mutex<[(slot: UInt64, success: Bool?)]>([])
        /// For each marker written, whether it was retried until acknowledged.
        let attemptsUntilAcknowledged = Mutex<[Bool]>([])
        let markerDelivered: Bool
        let generation: UInt64

        init(markerDelivered: Bool = true) {
            self.markerDelivered = markerDelivered
            generation = ledger.assign(SettlementTests.partition, markerPosition: nil)
            horizon.install(SettlementTests.partition, readThrough: 0)
        }

        var settler: Settler {
            Settler(duplicates: duplicates, ledger: ledger, horizon: horizon, workerID: "w", logger: Logger(label: "settlement", minimumLevel: .error, handler: DiscardingLogHandler()),
                    clock: { SettlementTests.now },
                    freeSlot: { [self] slot, success in released.withLock { $0.append((slot, success)) } }, releaseQuota: { _ in },
                    writeMarker: { [self] marker, _, untilAcknowledged, completion in
                        written.withLock { $0.append(marker) }
                        attemptsUntilAcknowledged.withLock { $0.append(untilAcknowledged) }
                        completion(.init(delivered: markerDelivered, offset: markerDelivered ? 40 : nil, error: nil))
                    })
        }

        /// Receives offset `offset` (tracked by the ledger) and claims `requestID` for it.
        func receive(_ offset: Int64, claiming requestID: String?) -> RecordOrigin {
            #expect(ledger.track(SettlementTests.partition, offset: offset) == generation)
            let origin = RecordOrigin(message: KafkaMessage(topic: SettlementTests.partition.topic, partition: SettlementTests.partition.partition,
                                                            offset: offset, key: nil, value: []),
                                      generation: generation, receivedAtMs: SettlementTests.now)
            if let requestID { #expect(duplicates.begin(SettlementTests.id(requestID), owner: .init(origin), nowMs: SettlementTests.now) == .fresh) }
            return origin
        }

        var committable: Int64? { ledger.commitCandidates([SettlementTests.partition]).first?.offset }
        func verdict(_ requestID: String, generation other: UInt64 = 99) -> DuplicateFilter.Verdict {
            duplicates.begin(SettlementTests.id(requestID), owner: .init(partition: SettlementTests.partition, generation: other), nowMs: SettlementTests.now)
        }
    }

    @Test("answered: the completed marker is written, the answer enters the horizon, later copies are duplicates, the offset commits")
    func answered() {
        let rig = Rig()
        let origin = rig.receive(0, claiming: "r-answered")
        rig.settler.settle(.answered(recovered: false, afterCall: true), origin: origin, identity: SettlementTests.id("r-answered"), claimed: true)
        #expect(rig.written.withLock { $0.map { [$0.state.rawValue, $0.outcome?.rawValue ?? "-", $0.requestID] } }
                == [["completed", "answered", "r-answered"]])
        #expect(rig.horizon.contains(Self.id("r-answered"), in: Self.partition, nowMs: Self.now))
        #expect(rig.verdict("r-answered") == .completed)
        #expect(rig.committable == 1)
    }

    @Test("an unauthentic message naming a request in flight is dead-lettered without freeing that request's claim")
    func unclaimedDeadLetterLeavesTheClaim() {
        let rig = Rig()
        let genuine = rig.receive(0, claiming: "r-genuine")
        let forged = rig.receive(1, claiming: nil)
        rig.settler.settle(.deadLettered(afterStartedMarker: false), origin: forged, identity: SettlementTests.id("r-genuine"), claimed: false)
        #expect(rig.written.withLock { $0.isEmpty })
        // Still held by the genuine delivery: a copy elsewhere waits for it.
        #expect(rig.verdict("r-genuine") == .awaitingOlderAttempt)
        // The forged offset is done, but the genuine one holds the commit back: a commit stays at
        // the genuine offset and names the forged one as done past it (`CommitMetadata`).
        #expect(rig.committable == 0)
        let metadata = CommitMetadata(parsing: rig.ledger.commitCandidates([SettlementTests.partition]).first?.metadata)
        #expect(metadata.done == [1...1])
        rig.settler.settle(.answered(recovered: false, afterCall: true), origin: genuine, identity: SettlementTests.id("r-genuine"), claimed: true)
        #expect(rig.committable == 2)
    }

    @Test("abandoned: the scheduler slot is freed, the claim released, the offset never completed")
    func abandoned() {
        let rig = Rig()
        let origin = rig.receive(0, claiming: "r-given-up")
        rig.settler.settle(.abandoned, origin: origin, identity: SettlementTests.id("r-given-up"), claimed: true, slot: 17)
        let freed = rig.released.withLock { $0 }
        #expect(freed.map(\.slot) == [17] && freed.map(\.success) == [nil], "a call given up before it was made says nothing of the issuer")
        #expect(rig.verdict("r-given-up") == .fresh)
        #expect(rig.committable == nil)
        #expect(rig.ledger.unsettledCount([Self.partition]) == 0)
    }

    @Test("a call that ended frees its slot with the breaker's verdict, before its answer is settled")
    func slotFreedWithVerdict() {
        let rig = Rig()
        let origin = rig.receive(0, claiming: "r-called")
        rig.settler.releaseSlot(21, success: false)
        rig.settler.releaseSlot(22, success: true)
        let freed = rig.released.withLock { $0 }
        #expect(freed.map(\.slot) == [21, 22] && freed.map(\.success) == [false, true])
        #expect(rig.committable == nil, "freeing the slot settles nothing")
        rig.settler.settle(.answered(recovered: false, afterCall: true), origin: origin, identity: SettlementTests.id("r-called"), claimed: true)
        #expect(rig.released.withLock { $0.count } == 2, "settling the answer frees no slot again")
    }

    @Test("dead-lettered after a started marker: a completed marker saying so, the claim released, not in the horizon")
    func deadLetteredAfterStart() {
        let rig = Rig()
        let origin = rig.receive(0, claiming: "r-dead")
        rig.settler.settle(.deadLettered(afterStartedMarker: true), origin: origin, identity: SettlementTests.id("r-dead"), claimed: true)
        #expect(rig.written.withLock { $0.map(\.outcome) } == [.deadLettered])
        #expect(!rig.horizon.contains(Self.id("r-dead"), in: Self.partition, nowMs: Self.now))
        #expect(rig.verdict("r-dead") == .fresh)
        #expect(rig.committable == 1)
    }

    @Test("a completed marker is retried until acknowledged; one that never is (the producer failed for good) abandons the offset")
    func markerNotWritten() {
        let rig = Rig(markerDelivered: false)
        let origin = rig.receive(0, claiming: "r-unmarked")
        rig.settler.settle(.answered(recovered: false, afterCall: true), origin: origin, identity: SettlementTests.id("r-unmarked"), claimed: true)
        #expect(rig.attemptsUntilAcknowledged.withLock { $0 } == [true], "the completed marker is retried until Kafka acknowledges it")
        #expect(!rig.horizon.contains(Self.id("r-unmarked"), in: Self.partition, nowMs: Self.now))
        #expect(rig.verdict("r-unmarked") == .fresh, "not finished: the next owner (or a redelivery) redoes it, finding the decision or reconciling")
        #expect(rig.committable == nil, "the offset must not complete without its completed marker")
        #expect(rig.ledger.unsettledCount([Self.partition]) == 0)
    }

    @Test("a decision without a call holds its offset until the plain completed marker is acknowledged; after a call it does not")
    func decidedWithoutCallAwaitsItsMarker() {
        let rig = Rig(markerDelivered: false)
        let withoutCall = rig.receive(0, claiming: "r-decided-no-call")
        rig.settler.settle(.decided(afterCall: false), origin: withoutCall, identity: SettlementTests.id("r-decided-no-call"), claimed: true)
        #expect(rig.attemptsUntilAcknowledged.withLock { $0 } == [true], "retried until Kafka acknowledges it")
        #expect(rig.committable == nil,
                "committed past without the marker, the next owner's horizon would not know the request is answered and would call a copy")
        let other = Rig(markerDelivered: false)
        let afterCall = other.receive(0, claiming: "r-decided-after-call")
        other.settler.settle(.decided(afterCall: true), origin: afterCall, identity: SettlementTests.id("r-decided-after-call"), claimed: true)
        #expect(other.attemptsUntilAcknowledged.withLock { $0 } == [false])
        #expect(other.committable == 1, "the decision after a call counts for the horizon itself")
    }
}
