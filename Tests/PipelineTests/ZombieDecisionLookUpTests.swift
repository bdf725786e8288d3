import Contract
import Dispatch
import Kafka
import Observability
import Recovery
import Synchronization
import Testing
@testable import Pipeline

/// A zombie's decision without a call is judged by every fence since the zombie took the
/// partition, also when the look-up starts after them (at the new owner's `started` marker): the
/// new owner's fence lies between the zombie's epoch and its decision, so the decision counts for
/// nothing, whoever reads it and from wherever.
@Suite("A zombie's decision without a call is withdrawn for every reader, whatever the read's start")
struct ZombieDecisionLookUpTests {
    static let now: Int64 = 100 * 3_600_000
    static let identity = RequestIdentity(program: "p", requestID: "r")

    /// The markers partition: the zombie's fence (0), the new owner's newer fence (1), the new
    /// owner's `started` marker (2), the zombie's `expired` decision carrying its epoch 0 (3).
    static func log() -> HorizonResumeTests.MarkerLog {
        let log = HorizonResumeTests.MarkerLog()
        log.append(MarkerFence(worker: "zombie", atMs: now, instance: "zombie-1", generation: 4).message(topic: "markers", partition: 0),
                   atMs: now)
        log.append(MarkerFence(worker: "owner", atMs: now + 1, instance: "owner-1", generation: 5).message(topic: "markers", partition: 0),
                   atMs: now + 1)
        log.append(CallMarker(identity, state: .started, requestOffset: 7, atMs: now + 2, worker: "owner", fence: 1, instance: "owner-1",
                              stamp: FenceStamp(generation: 5)).message(topic: "markers", partition: 0), atMs: now + 2)
        let expired = Array(#"{"request_id":"r","status":"expired"}"#.utf8)
        log.append(CallMarker(identity, state: .completed, requestOffset: 7, atMs: now + 3, worker: "zombie", outcome: .answeredWithoutCall,
                              fence: 0, instance: "zombie-1", stamp: FenceStamp(generation: 4), result: expired).message(topic: "markers", partition: 0),
                   atMs: now + 3)
        return log
    }

    static func lookUp(_ log: HorizonResumeTests.MarkerLog, from position: Int64, fencesFromPositionOnly: Bool = false) -> MarkerLookUp {
        let reader = MarkerCatchUp(reader: log, queue: DispatchExecutor().serialQueue(label: "zombie-look-up-test", onPool: false),
                                   logger: Logger(label: "zombie-look-up", minimumLevel: .error, handler: DiscardingLogHandler()),
                                   fencesFromPositionOnly: fencesFromPositionOnly)
        let done = DispatchSemaphore(value: 0)
        let found = Mutex(MarkerLookUp())
        reader.lookUp(key: CallMarker.key(identity, replayOf: nil), partition: 0, from: position) { result in
            found.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return found.withLock { $0 }
    }

    @Test("read from the new owner's started marker, after both fences: the zombie's expiry is no decision")
    func fromTheStartedMarker() {
        let found = Self.lookUp(Self.log(), from: 2)
        #expect(found.decision == nil, "the zombie was fenced out before it decided")
        #expect(found.completion == .notFound)
    }

    @Test("read from the partition's start: the same verdict")
    func fromTheStart() {
        #expect(Self.lookUp(Self.log(), from: 0).decision == nil)
    }

    @Test("judged by the fences after the read's start only (the defect), the zombie's expiry would count")
    func withoutTheEarlierFences() {
        #expect(Self.lookUp(Self.log(), from: 2, fencesFromPositionOnly: true).decision != nil)
    }
}
