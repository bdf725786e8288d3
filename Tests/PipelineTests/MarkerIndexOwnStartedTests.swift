import Contract
import Kafka
import Recovery
import Testing
@testable import Pipeline

/// The marker index learns this owner's own `started` markers: catch-up read the partition before
/// them, so without this a copy of a request this owner called and then dead-lettered (its result
/// could not be published) would find no marker in the same assignment and call the issuer again
/// with the same handshake. It is admitted as a recovery instead: reconciled, never called.
@Suite("The marker index knows the owner's own started markers")
struct MarkerIndexOwnStartedTests {
    let partition = TopicPartition(topic: "requests", partition: 0)
    let key = CallMarker.key(RequestIdentity(program: "p", requestID: "r"), replayOf: nil)

    /// An index with the partition installed from what a catch-up `found`.
    func installed(_ found: InheritedMarkers = InheritedMarkers()) -> MarkerIndex {
        let index = MarkerIndex()
        index.expect(partition, generation: 1)
        #expect(index.install(partition, generation: 1, found: found, readFrom: 0))
        return index
    }

    /// An index whose catch-up read the request's `completed` marker.
    func installedWithCompleted() -> MarkerIndex {
        var found = InheritedMarkers()
        found.add(CallMarker(RequestIdentity(program: "p", requestID: "r"), state: .completed, requestOffset: 0, atMs: 1, worker: "w",
                             outcome: .answered), at: 0)
        return installed(found)
    }

    @Test("a started marker written after catch-up makes a later copy a recovery")
    func startedAfterCatchUp() {
        let index = installed()
        #expect(index.state(of: key, in: partition) == nil)
        index.started(key, in: partition)
        #expect(index.state(of: key, in: partition) == .started)
        #expect(index.state(RequestIdentity(program: "p", requestID: "r"), replayOf: nil, in: partition) == .started)
        #expect(index.state(of: CallMarker.key(RequestIdentity(program: "q", requestID: "r"), replayOf: nil), in: partition) == nil,
                "another program's request with the same id is untouched")
    }

    @Test("an own started marker a newer owner's fence preceded is forgotten: a later copy tries to call, it does not reconcile")
    func fencedOutStartIsForgotten() {
        let index = installed()
        index.started(key, in: partition)
        index.fencedOut(key, in: partition, generation: 1)
        #expect(index.state(of: key, in: partition) == nil, "a fenced-out started marker made no call: nothing to reconcile")
        #expect(index.state(RequestIdentity(program: "p", requestID: "r"), replayOf: nil, in: partition) == nil)
    }

    @Test("a fenced-out verdict of an earlier assignment leaves the next assignment's started state alone: the copy reconciles")
    func fencedOutOfEarlierAssignmentKeepsStarted() {
        // A zombie's attempt (assignment 1) is told it was fenced out only after this process
        // took the partition again (assignment 2), whose catch-up found another owner's
        // `started` marker for the request: that call may have been made, so a copy reconciles.
        let index = MarkerIndex()
        index.expect(partition, generation: 2)
        var found = InheritedMarkers()
        found.add(CallMarker(RequestIdentity(program: "p", requestID: "r"), state: .started, requestOffset: 0, atMs: 1, worker: "other"),
                  at: 5)
        #expect(index.install(partition, generation: 2, found: found, readFrom: 0))
        #expect(index.state(of: key, in: partition) == .started)
        index.fencedOut(key, in: partition, generation: 1)
        #expect(index.state(of: key, in: partition) == .started, "another owner's started marker forgotten: the copy would call again")
        index.fencedOut(key, in: partition, generation: 2)
        #expect(index.state(of: key, in: partition) == nil, "in its own assignment the fenced-out start is forgotten")
    }

    @Test("a completed state is not forgotten when a later start is fenced out")
    func fencedOutKeepsCompleted() {
        let index = installedWithCompleted()
        index.fencedOut(key, in: partition, generation: 1)
        #expect(index.state(of: key, in: partition) == .completed)
    }

    @Test("a completed state read by catch-up stays completed")
    func completedStays() {
        let index = installedWithCompleted()
        index.started(key, in: partition)
        #expect(index.state(of: key, in: partition) == .completed)
    }

    @Test("a partition not installed (released, or still catching up) records nothing")
    func notInstalled() {
        let index = MarkerIndex()
        index.started(key, in: partition)
        index.expect(partition, generation: 1)
        #expect(index.install(partition, generation: 1, found: InheritedMarkers(), readFrom: 0))
        #expect(index.state(of: key, in: partition) == nil)
    }

    @Test("recording a started marker costs the same however many markers the assignment holds")
    func startedIsConstantCost() {
        // A partition whose assignment has seen 100,000 marker keys, and one with none: recording
        // 2,000 more `started` markers must not copy what is there (it did, once per call).
        var found = InheritedMarkers()
        for number in 0..<100_000 { found.states[CallMarker.Key(program: "p", requestID: "old-\(number)", replayOf: nil)] = .completed }
        let full = installed(found)
        let keys = (0..<2_000).map { CallMarker.Key(program: "p", requestID: "new-\($0)", replayOf: nil) }
        func seconds(_ index: MarkerIndex) -> Double {
            let elapsed = ContinuousClock().measure { for key in keys { index.started(key, in: partition) } }
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        // The empty partition's time is the best of three fresh indexes: a stall there cannot loosen the bound.
        let empty = (0..<3).map { _ in seconds(installed()) }.min() ?? 0
        let large = seconds(full)
        #expect(large < 20 * empty + 0.5, "2,000 started markers took \(large) s beside 100,000 keys, \(empty) s in an empty partition")
        #expect(full.state(of: keys[1_999], in: partition) == .started)
        #expect(full.state(of: CallMarker.Key(program: "p", requestID: "old-7", replayOf: nil), in: partition) == .completed)
    }
}
