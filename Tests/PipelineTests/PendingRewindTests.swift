@testable import Pipeline
import Testing

/// `PendingRewind`, the rule both consumer loops keep a rewind by: records at or before the offset
/// end it, a record past it first rewinds again once per turn, in a bounded number of turns.
@Suite("PendingRewind")
struct PendingRewindTests {
    @Test("the offset itself, or an earlier one, coming back ends the rewind")
    func offsetBackEndsIt() {
        for offset in [Int64(3), 7] {
            var rewind = PendingRewind(to: 7)
            #expect(rewind.record(at: offset, turn: 1) == .tookEffect)
        }
    }

    @Test("records past the offset: the first of a turn rewinds again, the rest of that turn wait; the next turn's first rewinds again")
    func oncePerTurn() {
        var rewind = PendingRewind(to: 10)
        #expect(rewind.record(at: 11, turn: 1) == .rewindAgain(offset: 10))
        #expect(rewind.record(at: 12, turn: 1) == .awaitingRewind(offset: 10))
        #expect(rewind.record(at: 13, turn: 1) == .awaitingRewind(offset: 10))
        #expect(rewind.record(at: 11, turn: 2) == .rewindAgain(offset: 10))
        #expect(rewind.record(at: 10, turn: 3) == .tookEffect)
    }

    @Test("an offset that never comes back (retention deleted it) is waited for in maximumRepeats turns, then records past it are taken")
    func boundedRepeats() {
        var rewind = PendingRewind(to: 5)
        for turn in 1...UInt64(PendingRewind.maximumRepeats) {
            #expect(rewind.record(at: 9, turn: turn) == .rewindAgain(offset: 5), "turn \(turn)")
        }
        #expect(rewind.record(at: 9, turn: UInt64(PendingRewind.maximumRepeats) + 1) == .tookEffect)
    }

    @Test("rewound again lower: the rewind waits for the earlier offset; higher: it keeps the earlier one")
    func lowerKeepsTheEarlier() {
        var rewind = PendingRewind(to: 20)
        rewind.lower(to: 25)
        #expect(rewind.offset == 20)
        rewind.lower(to: 15)
        #expect(rewind.offset == 15)
        #expect(rewind.record(at: 18, turn: 1) == .rewindAgain(offset: 15), "18 is past 15: records 15-17 were skipped")
        #expect(rewind.record(at: 15, turn: 2) == .tookEffect)
    }
}
