import Contract
import Dispatch
import Kafka
import Observability
import Recovery
import Synchronization
import Testing
@testable import Pipeline

/// A redelivered copy of a decided request publishes the request's *first* decision, also when
/// the catch-up's hand-over position lies after it: every later decision in the log is a losing
/// attempt's (each attempt writes its decision before it reads whether it was first), and the
/// catch-up, which reads the duplicate horizon from before the position, looks the first one up.
@Suite("A redelivered copy publishes the request's first decision, not the first one its catch-up reached")
struct FirstDecisionCatchUpTests {
    static let now: Int64 = 100 * 3_600_000
    static let identity = RequestIdentity(program: "p", requestID: "r")
    static let first = Array(#"{"request_id":"r","status":"indeterminate","code":"issuer_unavailable"}"#.utf8)
    static let losing = Array(#"{"request_id":"r","status":"not_provisioned"}"#.utf8)

    /// The markers partition: the call's `started` marker (0), the first decision (1: an exhausted
    /// reconciliation's `check_wallet`), a losing attempt's decision (2), another record (3).
    static func log() -> HorizonResumeTests.MarkerLog {
        let log = HorizonResumeTests.MarkerLog()
        log.append(CallMarker(identity, state: .started, requestOffset: 0, atMs: now, worker: "w1", fence: nil, instance: nil)
            .message(topic: "markers", partition: 0), atMs: now)
        log.append(CallMarker(identity, state: .completed, requestOffset: 0, atMs: now + 1, worker: "w1", outcome: .answered, result: first)
            .message(topic: "markers", partition: 0), atMs: now + 1)
        log.append(CallMarker(identity, state: .completed, requestOffset: 0, atMs: now + 2, worker: "w2", outcome: .answered, result: losing)
            .message(topic: "markers", partition: 0), atMs: now + 2)
        log.append("other", atMs: now + 3)
        return log
    }

    /// A catch-up from `position` with a one-hour duplicate horizon; the decision it found for the request.
    static func decision(_ log: HorizonResumeTests.MarkerLog, from position: Int64, firstDecisionReadOnly: Bool = false) -> [UInt8]? {
        let catchUp = MarkerCatchUp(reader: log, queue: DispatchExecutor().serialQueue(label: "first-decision-test", onPool: false),
                                    logger: Logger(label: "first-decision", minimumLevel: .error, handler: DiscardingLogHandler()),
                                    firstDecisionReadOnly: firstDecisionReadOnly)
        let horizon = MarkerHorizonRead(sinceMs: now - 3_600_000, horizonMs: 3_600_000, nowMs: now + 10)
        let done = DispatchSemaphore(value: 0)
        let found = Mutex<InheritedMarkers?>(nil)
        catchUp.read(partition: 0, from: position, horizon: horizon, while: { true }) { markers, _ in
            found.withLock { $0 = markers }
            done.signal()
        }
        done.wait()
        return found.withLock { $0 }?.decisions[CallMarker.key(identity, replayOf: nil)]
    }

    @Test("hand-over position after the first decision: the first decision is looked up and published again")
    func positionAfterTheFirstDecision() {
        #expect(Self.decision(Self.log(), from: 2) == Self.first)
    }

    @Test("hand-over position before every decision: the first one read is the first")
    func positionBeforeEveryDecision() {
        #expect(Self.decision(Self.log(), from: 0) == Self.first)
    }

    @Test("taking the first decision read (the defect), the losing attempt's would be published")
    func firstReadOnly() {
        #expect(Self.decision(Self.log(), from: 2, firstDecisionReadOnly: true) == Self.losing)
    }
}
