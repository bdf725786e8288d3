import Contract
import Kafka
@testable import Pipeline
import Recovery
import Synchronization
import Testing

/// Interleavings where a partition changing owner could lose a request or call an issuer
/// twice, forced step by step on the value-type state the worker keeps (ledger, markers, duplicate
/// filter). Each test is named after its interleaving.
@Suite("Hand-over interleavings on the ledger and marker state", .timeLimit(.minutes(5)))
struct HandOverInterleavingTests {
    static let partition = TopicPartition(topic: "provisioning.requests", partition: 0)

    /// The identity of request `requestID` (of one program, `p`).
    static func id(_ requestID: String) -> RequestIdentity { RequestIdentity(program: "p", requestID: requestID) }

    /// The marker key of request `requestID`.
    static func key(_ requestID: String) -> CallMarker.Key { CallMarker.key(id(requestID), replayOf: nil) }

    static func marker(_ requestID: String, _ state: CallMarker.State, requestOffset: Int64) -> CallMarker {
        CallMarker(id(requestID), state: state, requestOffset: requestOffset, atMs: 0, worker: "w1",
                   outcome: state == .completed ? .answered : nil)
    }

    /// Item 1. W1 committed offset 10 with `markers=50` and held 10–13: 12 started at marker 60,
    /// 13 answered (markers 61, 62); W1 dies. W2 reads from 50, finishes 10 (own marker 100),
    /// starts 11 (marker 101) and commits offset 11. Its metadata must still point at 60, or W3
    /// (reading from there after W2 dies) sees nothing for 12 and 13 and calls the issuer again.
    @Test("third owner after a hand-over still finds the first owner's markers (commit metadata keeps inherited markers)")
    func thirdOwnerFindsInheritedMarkers() throws {
        var found = InheritedMarkers()
        found.add(Self.marker("r12", .started, requestOffset: 12), at: 60)
        found.add(Self.marker("r13", .started, requestOffset: 13), at: 61)
        found.add(Self.marker("r13", .completed, requestOffset: 13), at: 62)
        #expect(found.states == [Self.key("r12"): .started, Self.key("r13"): .completed])
        #expect(found.markerOffsets == [12: 60, 13: 61])

        let ledger = OffsetLedger()
        let partition = Self.partition
        let generation = ledger.assign(partition, markerPosition: 50)
        ledger.inherit(partition, markerOffsets: found.markerOffsets, generation: generation)
        for offset: Int64 in 10...13 { _ = ledger.track(partition, offset: offset) }
        // 10: W2's own call (started marker 100), answered.
        ledger.markerWriting(partition, requestOffset: 10, generation: generation)
        ledger.markerWritten(partition, requestOffset: 10, markerOffset: 100, generation: generation)
        ledger.complete(partition, offset: 10, generation: generation)
        // 11: W2's call under way (started marker 101) when it commits.
        ledger.markerWriting(partition, requestOffset: 11, generation: generation)
        ledger.markerWritten(partition, requestOffset: 11, markerOffset: 101, generation: generation)
        // 12 (reconciled) and 13 (duplicate) are still queued behind 11 on the partition.

        let candidates = ledger.commitCandidates([partition])
        let commit = try #require(candidates.first)
        #expect(commit.offset == 11)
        let position = try #require(CommitMetadata(parsing: commit.metadata).markers)
        #expect(position <= 60, "W3 would read markers from \(position) and miss 12's started marker (60) and 13's (61, 62)")

        // Once 11, 12 and 13 are committed, the inherited markers no longer hold the position back.
        ledger.committed(candidates)
        for offset: Int64 in 11...13 { ledger.complete(partition, offset: offset, generation: generation) }
        let later = try #require(ledger.commitCandidates([partition]).first)
        #expect(later.offset == 14)
        #expect(CommitMetadata(parsing: later.metadata).markers == 102)
    }

    /// Item 2. Generation 1 of the partition began request R and is writing its `started`
    /// marker when the partition is revoked and comes straight back (generation 2), which is
    /// redelivered R. Its copy must not be dropped as a duplicate in flight: generation 1's marker
    /// callback then finds the partition no longer held and gives R up ("the new owner redoes
    /// the request"). The copy waits, and is admitted once the older attempt gives up.
    @Test("redelivery to the same process while the revoked generation's attempt is pending is admitted when that attempt gives up")
    func redeliveryToSameProcessWaitsForOlderGeneration() {
        let filter = DuplicateFilter(horizonMs: 60_000)
        let older = DuplicateFilter.Owner(partition: Self.partition, generation: 1)
        let newer = DuplicateFilter.Owner(partition: Self.partition, generation: 2)
        #expect(filter.begin(Self.id("r"), owner: older, nowMs: 0) == .fresh)
        let woken = Mutex(0)
        let verdict = filter.begin(Self.id("r"), owner: newer, nowMs: 1) { woken.withLock { $0 += 1 } }
        #expect(verdict == .awaitingOlderAttempt, "the copy would be completed as a duplicate and R lost")
        #expect(woken.withLock { $0 } == 0)
        filter.release(Self.id("r"), owner: older)  // generation 1: partition no longer held, the issuer is not called
        #expect(woken.withLock { $0 } == 1, "the waiting copy was not told the older attempt gave up")
        #expect(filter.begin(Self.id("r"), owner: newer, nowMs: 2) == .fresh)
        // A late release by the older generation never frees the newer attempt's claim.
        filter.release(Self.id("r"), owner: older)
        #expect(filter.begin(Self.id("r"), owner: DuplicateFilter.Owner(partition: Self.partition, generation: 3), nowMs: 3) == .awaitingOlderAttempt)
        #expect(filter.begin(Self.id("r"), owner: newer, nowMs: 3) == .inFlight, "a second copy under the same delivery is a duplicate")

        // An older attempt that answers makes the waiting copy a duplicate of a finished request.
        let answered = DuplicateFilter(horizonMs: 60_000)
        #expect(answered.begin(Self.id("q"), owner: older, nowMs: 0) == .fresh)
        let told = Mutex(false)
        #expect(answered.begin(Self.id("q"), owner: newer, nowMs: 1) { told.withLock { $0 = true } } == .awaitingOlderAttempt)
        answered.finish(Self.id("q"), owner: older, nowMs: 2)
        #expect(told.withLock { $0 })
        #expect(answered.begin(Self.id("q"), owner: newer, nowMs: 3) == .completed)
    }

    /// Item 6. Partition p is assigned (generation 1) and its catch-up read starts; p is revoked
    /// and re-assigned (generation 2) before that read ends. The stale read must neither install
    /// its markers nor make p ready: generation 2's own read, from its own committed position,
    /// is the one that counts (it may see markers the stale read did not).
    @Test("stale catch-up of a previous assignment ends after the re-assignment: it does not make the partition ready")
    func staleCatchUpAfterReassignment() {
        let index = MarkerIndex()
        let partition = Self.partition
        index.expect(partition, generation: 1)
        index.remove([partition])  // revoked
        index.expect(partition, generation: 2)  // re-assigned
        let stale = index.install(partition, generation: 1, found: InheritedMarkers(), readFrom: 0)
        #expect(!stale, "the stale read would resume the partition before its own catch-up")
        #expect(index.readFrom(partition) == nil)
        #expect(index.install(partition, generation: 2, found: { var found = InheritedMarkers(); found.states = [Self.key("r"): .started]; return found }(), readFrom: 40))
        #expect(index.state(of: Self.key("r"), in: partition) == .started)
        #expect(index.readFrom(partition) == 40)
    }

    static func started(_ id: String, _ requestOffset: Int64, epoch: Int64, instance: String) -> CallMarker {
        CallMarker(Self.id(id), state: .started, requestOffset: requestOffset, atMs: 0, worker: instance, fence: epoch, instance: instance)
    }

    /// Item 7, the zombie. W1 (process "a", fence at 5) wrote markers 6-20 itself; W2 (process
    /// "b") took the partition and wrote its fence at 21; W1, a zombie, still writes: its `started`
    /// for q lands at 22. Offset 21 is not one of W1's writes, so W1 cannot decide without reading
    /// it (no verdict while the gap is open and an own write could fill it), and once read, W2's
    /// fence stops W1's call. W2's catch-up (it reads after its fence) ignores W1's marker at 22, so
    /// W2 calls for q itself instead of reconciling a call that never happened.
    @Test("zombie owner's started after the new owner's fence: the zombie is fenced out, the new owner calls")
    func zombieStartedAfterNewOwnersFence() {
        var zombie = FenceLog(fence: 5)
        for offset in Int64(6)...20 { zombie.ownWrite(at: offset) }
        #expect(zombie.verdict(epoch: 5, marker: 20) == .call, "every offset before 20 is W1's own: no fence of anybody else there")
        zombie.ownWrite(at: 22)
        #expect(zombie.verdict(epoch: 5, marker: 22) == .unknown(from: 21), "21 was written by somebody else: it must be read")
        #expect(zombie.missing(before: 22) == 1)
        zombie.read(at: 21, foreignFence: MarkerFence(worker: "w2", atMs: 0, instance: "b"))
        #expect(zombie.verdict(epoch: 5, marker: 22) == .fencedOut(by: 21), "the zombie would call after the new owner's fence")

        var successor = InheritedMarkers()
        successor.fences.append(.init(offset: 5, instance: "a"))
        successor.fences.append(.init(offset: 21, instance: "b"))
        successor.add(Self.started("q", 8, epoch: 5, instance: "a"), at: 22)
        #expect(successor.states.isEmpty && successor.fencedOut == 1, "the new owner would reconcile q, which nobody called: \(successor.states)")
    }

    /// Item 7, the other side of the fence. W1's `started` for r landed at 20, before W2's fence at
    /// 21: W1 calls (every offset before 20 is its own), and W2, whose catch-up reads after its
    /// fence, finds r started and reconciles it: one call. The fence is written before the
    /// catch-up, so no marker can fall between what the catch-up read and the fence.
    @Test("zombie owner's started before the new owner's fence: the zombie calls once, the new owner's catch-up reconciles")
    func zombieStartedBeforeNewOwnersFence() {
        var zombie = FenceLog(fence: 5)
        for offset in Int64(6)...20 { zombie.ownWrite(at: offset) }
        zombie.read(at: 21, foreignFence: MarkerFence(worker: "w2", atMs: 0, instance: "b"))
        #expect(zombie.verdict(epoch: 5, marker: 20) == .call)

        var successor = InheritedMarkers()
        successor.fences.append(.init(offset: 5, instance: "a"))
        successor.add(Self.started("r", 7, epoch: 5, instance: "a"), at: 20)
        successor.fences.append(.init(offset: 21, instance: "b"))
        #expect(successor.states == [Self.key("r"): .started], "the new owner would call r again after the zombie's call")
        #expect(successor.markerOffsets == [7: 20])
    }

    /// Item 7, no second owner (a broker blip): the partition is lost and assigned back to the
    /// same process, which writes a new fence (at 30). An older assignment's `started` marker at 31
    /// (its write was in flight) is not fenced out by its own process's fence: that process's
    /// duplicate filter orders the two attempts, and a later owner's catch-up keeps the marker.
    @Test("own re-assignment (broker blip) does not fence out the process's own earlier assignment")
    func ownReassignmentDoesNotFenceItself() {
        var log = FenceLog(fence: 5)
        for offset in Int64(6)...29 { log.ownWrite(at: offset) }
        log.ownWrite(at: 30)  // the new assignment's fence: an own write
        log.ownWrite(at: 31)
        #expect(log.verdict(epoch: 5, marker: 31) == .call)
        #expect(log.verdict(epoch: 30, marker: 31) == .call)

        var next = InheritedMarkers()
        next.fences.append(.init(offset: 5, instance: "a"))
        next.fences.append(.init(offset: 30, instance: "a"))
        next.add(Self.started("r", 7, epoch: 5, instance: "a"), at: 31)
        #expect(next.states == [Self.key("r"): .started] && next.fencedOut == 0)
    }

    /// Item 7, one hand-over later: a `started` marker written after another process's fence was
    /// never followed by a call, so the next owner's catch-up ignores it (calls, does not
    /// reconcile); markers of earlier versions (no epoch) and of the fence's own process count.
    @Test("catch-up after a fenced-out zombie's started marker: the next owner calls, it does not reconcile")
    func catchUpIgnoresFencedOutStarted() {
        var found = InheritedMarkers()
        found.fences.append(.init(offset: 5, instance: "a"))
        found.add(Self.started("p", 6, epoch: 5, instance: "a"), at: 10)
        found.fences.append(.init(offset: 22, instance: "b"))
        found.add(Self.started("r", 7, epoch: 5, instance: "a"), at: 25)
        found.add(Self.started("q", 8, epoch: 22, instance: "b"), at: 26)
        found.add(CallMarker(requestID: "old", program: nil, state: .started, requestOffset: 9, atMs: 0, worker: "w0"), at: 27)
        #expect(found.states == [Self.key("p"): .started, Self.key("q"): .started, Self.key("old").legacy: .started], "r's marker was written by a fenced-out owner: \(found.states)")
        #expect(found.fencedOut == 1)
        #expect(found.markerOffsets[7] == nil)
    }

    /// A fence that lands late: process "x" was assigned the partition in group generation 3 and
    /// wrote its fence, but the write was slow; the group rebalanced, x gave the partition up, and
    /// W1 ("a") was assigned it in generation 5 and fenced at 10. x's fence lands at 11. It must not
    /// fence W1 out (else every request of the partition is given up, unanswered, until the
    /// next rebalance); a fence of generation 6 does; unknown
    /// generations (an earlier version's fences) keep the conservative rule.
    @Test("a fence of an older group generation that lands after the owner's fence fences nobody out")
    func staleFenceIsIgnored() {
        var log = FenceLog(fence: 10, stamp: FenceStamp(generation: 5))
        log.read(at: 11, foreignFence: MarkerFence(worker: "x", atMs: 0, instance: "x", generation: 3))
        log.ownWrite(at: 12)
        #expect(log.verdict(epoch: 10, marker: 12) == .call, "a late fence of generation 3 stops an owner of generation 5")
        log.read(at: 13, foreignFence: MarkerFence(worker: "y", atMs: 0, instance: "y", generation: 6))
        log.ownWrite(at: 14)
        #expect(log.verdict(epoch: 10, marker: 14) == .fencedOut(by: 13), "a newer owner's fence must stop this one")
        var unknown = FenceLog(fence: 10, stamp: FenceStamp(generation: 5))
        unknown.read(at: 11, foreignFence: MarkerFence(worker: "x", atMs: 0, instance: "x"))
        unknown.ownWrite(at: 12)
        #expect(unknown.verdict(epoch: 10, marker: 12) == .fencedOut(by: 11), "a fence without a generation counts as newer")

        var next = InheritedMarkers()
        next.fences.append(.init(offset: 10, instance: "a", generation: 5))
        next.fences.append(.init(offset: 11, instance: "x", generation: 3))
        var started = Self.started("r", 7, epoch: 10, instance: "a")
        started.generation = 5
        next.add(started, at: 12)
        #expect(next.states == [Self.key("r"): .started] && next.fencedOut == 0, "W1's marker after the late fence was followed by a call")
    }

    /// A renamed `group_id` (or a second deployment on the same markers topic) starts its
    /// generations again at 1: the old group's fences, of higher generations, must not make every
    /// assignment of the new group stale (paused for ever). Within one group, and for fences of an
    /// earlier version that name no group, a newer generation still does.
    @Test("a newer owner is a fence of a newer generation of the same group; another group's fence is none")
    func newerOwnerCountsGenerationsPerGroup() {
        var found = InheritedMarkers()
        found.fences = [InheritedMarkers.Fence(offset: 3, instance: "old-a", generation: 57, group: "provisioner-old")]
        let me = FenceStamp(generation: 2, group: "provisioner")
        #expect(found.newerOwner(than: me, instance: "me") == nil, "the old group's generation 57 says nothing of generation 2 here")
        found.fences.append(InheritedMarkers.Fence(offset: 5, instance: "peer", generation: 3, group: "provisioner"))
        #expect(found.newerOwner(than: me, instance: "me")?.offset == 5)
        #expect(found.newerOwner(than: FenceStamp(generation: 3, group: "provisioner"), instance: "me") == nil)
        found.fences = [InheritedMarkers.Fence(offset: 7, instance: "earlier-version", generation: 9)]
        #expect(found.newerOwner(than: me, instance: "me")?.offset == 7, "an earlier version's fence counts as this group's")
    }

    /// After a renamed `group_id`: the old group's last owner "x" (generation 6, fence written at
    /// 17,000) sent its fence to a slow broker and exited; it lands at 11, after the new group's
    /// first owner "a" (generation 1, fence at 10, written at 20,000). Generations of two groups
    /// say nothing, so the times the two fences were written decide (more than the clocks' margin
    /// apart; within it, the later in the log wins): x's is older, so it fences
    /// "a" out neither at its call nor for a reader of a's markers (before, every request of the
    /// partition was given up for an owner that had exited, and never answered). A fence of a
    /// third group written after a's ("y", at 22,500) does fence "a" out. Both sides judge the same
    /// two recorded times: had x lived on, its catch-up would find a's fence newer than its own
    /// (its assignment stale, never run), so one of the two calls, never both.
    @Test("another group's fence fences an owner out when it was written after the owner's, whatever its generation or offset")
    func anotherGroupsFenceIsOrderedByWhenItWasWritten() {
        let owner = FenceStamp(generation: 1, group: "renamed", atMs: 20_000)
        let late = MarkerFence(worker: "x", atMs: 17_000, instance: "x", generation: 6, group: "old")
        var log = FenceLog(fence: 10, stamp: owner)
        let landedLate = log.read(at: 11, foreignFence: late)
        #expect(landedLate, "the old group's fence landed late")
        log.ownWrite(at: 12)
        #expect(log.verdict(epoch: 10, marker: 12) == .call, "the old group's late fence stops the renamed group's owner")
        let newer = log.read(at: 13, foreignFence: MarkerFence(worker: "y", atMs: 22_500, instance: "y", generation: 1, group: "other"))
        #expect(!newer, "a later deployment's fence did not land late")
        log.ownWrite(at: 14)
        #expect(log.verdict(epoch: 10, marker: 14) == .fencedOut(by: 13), "a later deployment's fence must stop this owner")
        var withinMargin = FenceLog(fence: 10, stamp: owner)
        withinMargin.read(at: 11, foreignFence: MarkerFence(worker: "z", atMs: 20_000 - MarkerFence.crossGroupMarginMs, instance: "z",
                                                            generation: 6, group: "old"))
        withinMargin.ownWrite(at: 12)
        #expect(withinMargin.verdict(epoch: 10, marker: 12) == .fencedOut(by: 11),
                "a fence written within the clocks' margin of the owner's may be newer: the later in the log wins")

        var reader = InheritedMarkers()
        reader.fences = [.init(offset: 10, instance: "a", generation: 1, group: "renamed", atMs: 20_000), .init(offset: 11, late)]
        var called = Self.started("r", 7, epoch: 10, instance: "a")
        called.generation = 1
        called.group = "renamed"
        called.fenceAtMs = 20_000
        reader.add(called, at: 12)
        #expect(reader.states == [Self.key("r"): .started] && reader.fencedOut == 0, "a's call after the late fence must be reconciled, not made again")
        reader.fences.append(.init(offset: 13, instance: "y", generation: 1, group: "other", atMs: 22_500))
        var fenced = Self.started("s", 8, epoch: 10, instance: "a")
        fenced.generation = 1
        fenced.group = "renamed"
        fenced.fenceAtMs = 20_000
        reader.add(fenced, at: 14)
        #expect(reader.states[Self.key("s")] == nil && reader.fencedOut == 1, "a's marker after a newer deployment's fence was not followed by a call")

        #expect(reader.newerOwner(than: owner, instance: "a")?.offset == 13, "the later deployment's fence makes a's assignment stale")
        reader.fences.removeLast()
        #expect(reader.newerOwner(than: owner, instance: "a") == nil, "the late fence is older than a's")
        #expect(reader.newerOwner(than: late.stamp, instance: "x")?.offset == 10, "x, had it lived on, must not run the partition")
        #expect(reader.newerOwner(than: FenceStamp(generation: 6, group: "old", atMs: 18_000 + MarkerFence.crossGroupMarginMs), instance: "x") == nil,
                "within the margin, a's fence is not newer: x's, later in the log, wins")
        #expect(reader.newerOwner(than: FenceStamp(generation: 6, group: "old"), instance: "x") == nil, "without both times, nothing is newer")
    }

    /// The round trip of the fields fencing adds to the records.
    @Test("fence record and a started marker's epoch and instance survive encoding")
    func fenceRecordsRoundTrip() throws {
        let fence = MarkerFence(worker: "w1", atMs: 1_700_000_000_000, instance: "0123abcd", generation: 42, group: "provisioner")
        let message = fence.message(topic: "m", partition: 0)
        #expect(message.key == nil)
        #expect(MarkerFence.decode(message.value ?? []) == fence)
        let earlier = MarkerFence(worker: "w1", atMs: 1_700_000_000_000, instance: "0123abcd", generation: 42)
        #expect(MarkerFence.decode(earlier.message(topic: "m", partition: 0).value ?? [])?.group == nil, "an earlier version's fence names no group")
        var marker = Self.started("r", 7, epoch: 5, instance: "0123abcd")
        marker.generation = 42
        marker.group = "provisioner"
        marker.fenceAtMs = 1_700_000_000_000
        let decoded = CallMarker.decode(marker.message(topic: "m", partition: 0).value ?? [])
        #expect(decoded?.fence == 5 && decoded?.instance == "0123abcd" && decoded?.stamp == fence.stamp)
        #expect(CallMarker.decode(message.value ?? []) == nil, "a fence must not read as a call marker")
    }
}
