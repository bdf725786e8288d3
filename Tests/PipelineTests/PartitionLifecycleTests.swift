import Kafka
@testable import Pipeline
import Testing

/// `PartitionLifecycle` without a broker: each event and the action it returns, and the gate
/// "no record of an assignment reaches intake before that assignment's catch-up finished".
@Suite("PartitionLifecycle")
struct PartitionLifecycleTests {
    let p0 = TopicPartition(topic: "requests", partition: 0)
    let p1 = TopicPartition(topic: "requests", partition: 1)

    /// A lifecycle holding `p0` in generation 1, fenced at 10 and caught up, resumed by one turn.
    func running() -> PartitionLifecycle {
        var lifecycle = PartitionLifecycle()
        _ = lifecycle.assigned(p0, generation: 1)
        _ = lifecycle.fenced(p0, generation: 1, epoch: 10)
        _ = lifecycle.caughtUp(p0, generation: 1)
        _ = lifecycle.turn(pending: 0, limit: 100)
        return lifecycle
    }

    @Test("an assignment is paused, fenced, caught up, then resumed by the next turn")
    func assignmentRunsAfterCatchUp() {
        var lifecycle = PartitionLifecycle()
        let r1 = lifecycle.assigned(p0, generation: 1)
        #expect(r1 == .pause([p0]))
        #expect(lifecycle.phase(of: p0) == .fencing)
        let r2 = lifecycle.turn(pending: 0, limit: 100)
        #expect(r2 == nil, "a fencing partition is not resumed")
        let r3 = lifecycle.caughtUp(p0, generation: 1)
        #expect(r3 == false, "a catch-up cannot finish before the fence")
        let r4 = lifecycle.fenced(p0, generation: 1, epoch: 10)
        #expect(r4)
        #expect(lifecycle.phase(of: p0) == .catchingUp(epoch: 10))
        let r5 = lifecycle.turn(pending: 0, limit: 100)
        #expect(r5 == nil, "a partition catching up is not resumed")
        let r6 = lifecycle.caughtUp(p0, generation: 1)
        #expect(r6)
        #expect(lifecycle.paused == [p0], "running, but not resumed until the poll thread's turn")
        let r7 = lifecycle.turn(pending: 0, limit: 100)
        #expect(r7 == .resume([p0]))
        #expect(lifecycle.paused.isEmpty)
        let r8 = lifecycle.turn(pending: 0, limit: 100)
        #expect(r8 == nil, "resumed once")
    }

    @Test("records of an assignment still fencing or catching up never reach intake; the first rewinds the partition")
    func gateRefusesBeforeCatchUp() {
        var lifecycle = PartitionLifecycle()
        _ = lifecycle.assigned(p0, generation: 1)
        let r9 = lifecycle.admit(p0, offset: 36)
        #expect(r9 == .refuse(.rewind(p0, offset: 36)))
        let r10 = lifecycle.admit(p0, offset: 37)
        #expect(r10 == .refuse(nil), "later records of the same fetch are dropped, not rewound again")
        let r11 = lifecycle.admit(p0, offset: 35)
        #expect(r11 == .refuse(.rewind(p0, offset: 35)), "an earlier one rewinds further back")
        _ = lifecycle.fenced(p0, generation: 1, epoch: 10)
        let r12 = lifecycle.admit(p0, offset: 38)
        #expect(r12 == .refuse(nil))
        _ = lifecycle.caughtUp(p0, generation: 1)
        let r13 = lifecycle.admit(p0, offset: 35)
        #expect(r13 == .deliver)
        #expect(lifecycle.refusedRecords == 4)
    }

    @Test("a catch-up of an earlier assignment that ends after a release and a re-assignment makes nothing run")
    func staleCatchUpIgnored() {
        var lifecycle = PartitionLifecycle()
        _ = lifecycle.assigned(p0, generation: 1)
        _ = lifecycle.fenced(p0, generation: 1, epoch: 10)
        // The reader of generation 1 has installed its markers; before it says "caught up" the
        // poll thread releases the partition (lost) and it is assigned again (generation 2).
        lifecycle.lost([p0])
        lifecycle.released([p0])
        _ = lifecycle.assigned(p0, generation: 2)
        let r14 = lifecycle.caughtUp(p0, generation: 1)
        #expect(r14 == false)
        #expect(lifecycle.phase(of: p0) == .fencing)
        let r15 = lifecycle.turn(pending: 0, limit: 100)
        #expect(r15 == nil)
        let r16 = lifecycle.admit(p0, offset: 36)
        #expect(r16 == .refuse(.rewind(p0, offset: 36)))
        // A late fence of generation 1 does not start generation 2's catch-up either.
        let r17 = lifecycle.fenced(p0, generation: 1, epoch: 10)
        #expect(r17 == false)
        let r18 = lifecycle.fenced(p0, generation: 2, epoch: 20)
        #expect(r18)
        let r19 = lifecycle.caughtUp(p0, generation: 2)
        #expect(r19)
        let r20 = lifecycle.turn(pending: 0, limit: 100)
        #expect(r20 == .resume([p0]))
    }

    @Test("a revoked partition's records are dropped without a rewind; a released one is forgotten")
    func revokedDrops() {
        var lifecycle = running()
        let r21 = lifecycle.admit(p0, offset: 5)
        #expect(r21 == .deliver)
        let paused = lifecycle.revoked([p0], deadlineMs: 10_000)
        #expect(paused == .pause([p0]), "a draining partition is fetched no more")
        #expect(lifecycle.phase(of: p0) == .draining)
        let r22 = lifecycle.admit(p0, offset: 6)
        #expect(r22 == .refuse(nil))
        lifecycle.released([p0])
        #expect(lifecycle.phase(of: p0) == nil)
        let r23 = lifecycle.admit(p0, offset: 7)
        #expect(r23 == .refuse(nil))
        #expect(lifecycle.assigned.isEmpty)
    }

    @Test("backpressure pauses every partition and resumes only the running ones below half")
    func backpressure() {
        var lifecycle = running()
        _ = lifecycle.assigned(p1, generation: 1)
        let paused = lifecycle.turn(pending: 100, limit: 100)
        guard case .pause(let partitions) = paused else {
            Issue.record("expected a pause, got \(String(describing: paused))")
            return
        }
        #expect(Set(partitions) == [p0, p1])
        #expect(lifecycle.isBackpressured)
        #expect(lifecycle.paused == [p0, p1])
        let r24 = lifecycle.turn(pending: 60, limit: 100)
        #expect(r24 == nil, "above half: still paused")
        let r25 = lifecycle.turn(pending: 50, limit: 100)
        #expect(r25 == .resume([p0]), "p1 still fencing stays paused")
        #expect(lifecycle.paused == [p1])
        // A partition whose catch-up ends under backpressure waits for the pause to lift.
        _ = lifecycle.turn(pending: 100, limit: 100)
        _ = lifecycle.fenced(p1, generation: 1, epoch: 3)
        _ = lifecycle.caughtUp(p1, generation: 1)
        let r26 = lifecycle.turn(pending: 90, limit: 100)
        #expect(r26 == nil)
        let resumed = lifecycle.turn(pending: 10, limit: 100)
        guard case .resume(let partitions) = resumed else {
            Issue.record("expected a resume, got \(String(describing: resumed))")
            return
        }
        #expect(Set(partitions) == [p0, p1], "both run now")
    }

    @Test("every pause and resume raises the flow version the fetch watchdog compares")
    func flowVersion() {
        var lifecycle = PartitionLifecycle()
        let start = lifecycle.flowVersion
        _ = lifecycle.assigned(p0, generation: 1)
        let assigned = lifecycle.flowVersion
        #expect(assigned > start)
        _ = lifecycle.fenced(p0, generation: 1, epoch: 1)
        _ = lifecycle.caughtUp(p0, generation: 1)
        _ = lifecycle.turn(pending: 0, limit: 10)
        #expect(lifecycle.flowVersion > assigned)
    }

    @Test("a revoke drains without blocking: given up once its partitions settle, or at its deadline, all together")
    func revokeDrainEndsWhenSettledOrAtDeadline() {
        var lifecycle = running()
        _ = lifecycle.assigned(p1, generation: 2)
        _ = lifecycle.fenced(p1, generation: 2, epoch: 3)
        _ = lifecycle.caughtUp(p1, generation: 2)
        _ = lifecycle.revoked([p0, p1], deadlineMs: 10_000)
        var unsettled: [TopicPartition: Int] = [p0: 2, p1: 0]
        let count: ([TopicPartition]) -> Int = { partitions in partitions.reduce(0) { $0 + unsettled[$1, default: 0] } }
        let early = lifecycle.finishRevoke(nowMs: 5_000, unsettled: count)
        #expect(early == nil, "p0 still holds work: nothing is given up, not even the settled p1")
        unsettled[p0] = 0
        let settled = lifecycle.finishRevoke(nowMs: 5_001, unsettled: count)
        #expect(settled.map(Set.init) == [p0, p1])
        let again = lifecycle.finishRevoke(nowMs: 5_002, unsettled: count)
        #expect(again == nil, "a revoke is given up once")
        // A second revoke whose work never settles is given up at its deadline.
        var other = running()
        _ = other.revoked([p0], deadlineMs: 1_000)
        let waiting = other.finishRevoke(nowMs: 999) { _ in 3 }
        #expect(waiting == nil)
        let late = other.finishRevoke(nowMs: 1_000) { _ in 3 }
        #expect(late == [p0])
    }

    @Test("a lost partition is not waited for by the revoke draining beside it")
    func lostLeavesTheDrain() {
        var lifecycle = running()
        _ = lifecycle.assigned(p1, generation: 2)
        _ = lifecycle.revoked([p0, p1], deadlineMs: 10_000)
        lifecycle.lost([p1])
        lifecycle.released([p1])
        let due = lifecycle.finishRevoke(nowMs: 1) { partitions in partitions.contains(p1) ? 5 : 0 }
        #expect(due == [p0])
        #expect(lifecycle.takeRevoke().isEmpty)
    }

    @Test("a rewind is kept until it took effect: a record past it while running rewinds again; the offset itself clears it")
    func lostRewindIsRepeated() {
        var lifecycle = PartitionLifecycle()
        _ = lifecycle.assigned(p0, generation: 1)
        let refused = lifecycle.admit(p0, offset: 36)
        #expect(refused == .refuse(.rewind(p0, offset: 36)))
        _ = lifecycle.fenced(p0, generation: 1, epoch: 10)
        _ = lifecycle.caughtUp(p0, generation: 1)
        let resumed = lifecycle.turn(pending: 0, limit: 100)
        #expect(resumed == .resume([p0]))
        // The seek to 36 failed (or librdkafka never carried it out): 38 comes first.
        let lost = lifecycle.admit(p0, offset: 38)
        #expect(lost == .rewindLost(.rewind(p0, offset: 36)), "taking 38 would let 36 and 37 be committed past")
        #expect(lifecycle.paused == [p0], "paused until the next turn resumes it from the offset rewound to")
        let again = lifecycle.turn(pending: 0, limit: 100)
        #expect(again == .resume([p0]))
        let back = lifecycle.admit(p0, offset: 36)
        #expect(back == .deliver)
        let next = lifecycle.admit(p0, offset: 37)
        #expect(next == .deliver, "once the offset came back, the rewind is done")
        // A partition whose rewound offset never comes back (retention deleted it) is rewound a
        // bounded number of times, then takes what comes.
        var gone = PartitionLifecycle()
        _ = gone.assigned(p1, generation: 1)
        _ = gone.admit(p1, offset: 5)
        _ = gone.fenced(p1, generation: 1, epoch: 1)
        _ = gone.caughtUp(p1, generation: 1)
        for _ in 0..<PendingRewind.maximumRepeats {
            _ = gone.turn(pending: 0, limit: 100)
            let repeated = gone.admit(p1, offset: 9)
            #expect(repeated == .rewindLost(.rewind(p1, offset: 5)))
        }
        let taken = gone.admit(p1, offset: 9)
        #expect(taken == .deliver)
    }

    @Test("one poll's records past the offset rewound to are one failed seek: the rest of the batch waits, uncounted, for the next turn")
    func batchPastARewindCountsOnce() {
        var lifecycle = PartitionLifecycle()
        _ = lifecycle.assigned(p0, generation: 1)
        _ = lifecycle.admit(p0, offset: 3)
        _ = lifecycle.fenced(p0, generation: 1, epoch: 1)
        _ = lifecycle.caughtUp(p0, generation: 1)
        _ = lifecycle.turn(pending: 0, limit: 100)
        // The seek to 3 did not take effect: one poll returns 4...30, more than the bound of repeats.
        let first = lifecycle.admit(p0, offset: 4)
        #expect(first == .rewindLost(.rewind(p0, offset: 3)))
        for offset in Int64(5)...Int64(4 + PendingRewind.maximumRepeats + 6) {
            let admission = lifecycle.admit(p0, offset: offset)
            #expect(admission == .awaitingRewind, "offset \(offset) was fetched before the repeated rewind; taking it skips 3")
        }
        // The next turn's poll brings 3 back: it and what follows are taken.
        _ = lifecycle.turn(pending: 0, limit: 100)
        #expect(lifecycle.admit(p0, offset: 3) == .deliver)
        #expect(lifecycle.admit(p0, offset: 4) == .deliver)
    }
}
