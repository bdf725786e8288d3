import Contract
import Kafka
@testable import Pipeline
import Recovery
import Testing

/// Records the worker reads back from its own topics are bounded field by field: a damaged or
/// forged one is refused (with a reason), never decoded with values that overflow later.
@Suite("Records read back from Kafka are bounded", .timeLimit(.minutes(5)))
struct RecordBoundsTests {
    static let job = ReconcileJob(requestID: "req-1", program: "demo-imprint", issuer: .imprint, wallet: .applePay, kind: .provision,
                                  cardID: Sensitive("pm_1"), deviceRef: String(repeating: "ab", count: 32), transactionReference: nil,
                                  windowStartMs: 1_700_000_000_000, deadlineMs: 1_700_000_020_000, attempt: 2,
                                  dueAtMs: 1_700_000_030_000, firstIndeterminateAtMs: 1_700_000_025_000,
                                  traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                                  handOver: ReconcileJob.MarkersPosition(markersPartition: 2, markersFrom: 10, replayOf: "provisioning.dlq:0:7"))

    /// The job's JSON with one member replaced by `json` (raw JSON text).
    static func job(with key: String, _ json: String) -> [UInt8] {
        guard case .object(var members) = try! JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(job.encodedJSON()) else {
            fatalError("a job is an object")
        }
        members[key] = try! JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(Array(json.utf8))
        return JSONWriter.encode(.object(members))
    }

    @Test("a well-formed job still round-trips")
    func wellFormedJobRoundTrips() throws {
        #expect(try ReconcileJob.read(Self.job.encodedJSON()).get() == Self.job)
    }

    @Test("reconciliation jobs with a field out of range are refused with a reason", arguments: [
        ("attempt", "9223372036854775807"), ("attempt", "0"), ("attempt", "1001"), ("attempt", "-1"),
        ("due_at", "-9223372036854775808"), ("due_at", "9223372036854775807"), ("due_at", "-1"), ("due_at", "32503680000001"),
        ("window_start", "-9223372036854775808"), ("deadline", "9223372036854775807"),
        ("first_indeterminate_at", "-5"), ("request_id", "\"\""), ("request_id", "\"\(String(repeating: "r", count: 65))\""),
        ("program", "\"a b\""), ("card_id", "\"\(String(repeating: "c", count: 129))\""), ("device_ref", "\"\(String(repeating: "d", count: 129))\""),
        ("transaction_reference", "\"\(String(repeating: "t", count: 65))\""), ("traceparent", "\"\(String(repeating: "0", count: 129))\""),
    ])
    func outOfRangeJobsAreRefused(field: String, json: String) {
        let bytes = Self.job(with: field, json)
        guard case .failure(let problem) = ReconcileJob.read(bytes) else {
            Issue.record("\(field) = \(json.prefix(40)) was accepted")
            return
        }
        #expect(problem.reason.contains(field), "\(problem.reason)")
        #expect(ReconcileJob.decode(bytes) == nil)
    }

    @Test("a hand-over whose replay_of is not topic:partition:offset is dropped; the job stays")
    func invalidHandOverReplayIsDropped() throws {
        let oversize = "provisioning.dlq:0:" + String(repeating: "1", count: 300)
        let bytes = Self.job(with: "hand_over", #"{"markers_partition":2,"markers_from":10,"replay_of":"\#(oversize)"}"#)
        let read = try ReconcileJob.read(bytes).get()
        #expect(read.handOver == nil)
        #expect(read.requestID == Self.job.requestID)
    }

    @Test("a decision's result travels in its x-decision header: read back with the headers, bounded, and only on a completed marker")
    func decisionHeader() {
        let result = Array(#"{"version":1,"request_id":"req-1","status":"provisioned"}"#.utf8)
        let decision = CallMarker(requestID: "req-1", program: "prog-a", state: .completed, requestOffset: 3, atMs: 1_700_000_000_000, worker: "w",
                                  outcome: .answered, result: result)
        #expect(decision.isDecision)
        let record = decision.message(topic: "m", partition: 0)
        let value = record.value ?? []
        #expect(!String(decoding: value, as: UTF8.self).contains("provisioned"), "the value holds no result")
        #expect(CallMarker.decode(value, headers: record.headers) == decision)
        var valueOnly = decision
        valueOnly.result = nil
        #expect(CallMarker.decode(value) == valueOnly, "the value alone reads as a plain completed marker")
        #expect(CallMarker.decode(value, headers: [KafkaHeader(key: CallMarker.decisionHeader, value: [])]) == nil)
        let tooLarge = [UInt8](repeating: 0x20, count: RecordBounds.maxResultBytes + 1)
        #expect(CallMarker.decode(value, headers: [KafkaHeader(key: CallMarker.decisionHeader, value: tooLarge)]) == nil)
        let started = CallMarker(requestID: "req-1", program: "prog-a", state: .started, requestOffset: 3, atMs: 1_700_000_000_000, worker: "w")
        #expect(CallMarker.decode(started.message(topic: "m", partition: 0).value ?? [], headers: record.headers) == nil,
                "a started marker never carries a decision")
        let interim = CallMarker(requestID: "req-1", program: "prog-a", state: .completed, requestOffset: 3, atMs: 1, worker: "w", outcome: .answered)
        #expect(!interim.isDecision)
    }

    @Test("markers name their program; an earlier version's marker (no program) speaks for its request id under every program, its decision for the program its result names")
    func markersOfEarlierVersions() throws {
        let identity = RequestIdentity(program: "prog-a", requestID: "req-1")
        let started = CallMarker(identity, state: .started, requestOffset: 3, atMs: 1_700_000_000_000, worker: "w")
        let value = String(decoding: started.message(topic: "m", partition: 0).value ?? [], as: UTF8.self)
        #expect(value.contains(#""program":"prog-a""#))
        #expect(CallMarker.decode(Array(value.utf8))?.key == CallMarker.key(identity, replayOf: nil))
        let other = CallMarker.key(RequestIdentity(program: "prog-b", requestID: "req-1"), replayOf: nil)
        #expect(!started.key.speaks(for: other), "a marker of program A says nothing of program B's request")
        let legacy = try #require(CallMarker.decode(Array(#"{"request_id":"req-1","state":"started","request_offset":3,"at":4,"worker":"w"}"#.utf8)))
        #expect(legacy.program == nil)
        #expect(legacy.key.speaks(for: other) && legacy.key.speaks(for: started.key), "an earlier version's marker speaks for every program")
        #expect(!legacy.key.speaks(for: CallMarker.key(identity, replayOf: "provisioning.dlq:0:1")), "but not for a replay")
        // An earlier version's decision: attributed to the program its result names.
        let result = ProvisioningResult(requestID: "req-1", program: "prog-b", issuer: .imprint, wallet: .googlePay, kind: .provision,
                                        status: .provisioned, isFinal: true, code: nil, message: "ok", nextAction: .addToWallet).encodedJSON()
        let legacyValue = Array(#"{"request_id":"req-1","state":"completed","request_offset":3,"at":4,"worker":"w","outcome":"answered"}"#.utf8)
        let decision = try #require(CallMarker.decode(legacyValue, headers: [KafkaHeader(key: CallMarker.decisionHeader, value: result)]))
        #expect(decision.program == "prog-b" && decision.key == other)
        // One whose result names another request, or none that reads, cannot be attributed: unreadable.
        let foreign = ProvisioningResult(requestID: "req-2", program: "prog-b", issuer: .imprint, wallet: .googlePay, kind: .provision,
                                         status: .provisioned, isFinal: true, code: nil, message: "ok", nextAction: .addToWallet).encodedJSON()
        #expect(CallMarker.decode(legacyValue, headers: [KafkaHeader(key: CallMarker.decisionHeader, value: foreign)]) == nil)
        #expect(CallMarker.decode(legacyValue, headers: [KafkaHeader(key: CallMarker.decisionHeader, value: Array("{}".utf8))]) == nil)
    }

    @Test("call markers with a field out of range do not decode")
    func outOfRangeMarkersDoNotDecode() {
        let good = CallMarker(requestID: "req-1", program: "prog-a", state: .started, requestOffset: 3, atMs: 1_700_000_000_000, worker: "w",
                              replayOf: "provisioning.dlq:1:2")
        #expect(CallMarker.decode(good.message(topic: "m", partition: 0).value ?? []) == good)
        let bad = [
            #"{"request_id":"req-1","state":"started","request_offset":-1,"at":4,"worker":"w"}"#,
            #"{"request_id":"req-1","state":"started","request_offset":3,"at":-9223372036854775808,"worker":"w"}"#,
            #"{"request_id":"req-1","state":"started","request_offset":3,"at":32503680000001,"worker":"w"}"#,
            #"{"request_id":"","state":"started","request_offset":3,"at":4,"worker":"w"}"#,
            #"{"request_id":"req 1","state":"started","request_offset":3,"at":4,"worker":"w"}"#,
            #"{"request_id":"req-1","state":"started","request_offset":3,"at":4,"worker":"\#(String(repeating: "w", count: 300))"}"#,
            #"{"request_id":"req-1","state":"started","request_offset":3,"at":4,"worker":"w","replay_of":"not-a-reference"}"#,
            #"{"request_id":"req-1","state":"started","request_offset":3,"at":4,"worker":"w","replay_of":"dlq:-1:2"}"#,
            #"{"request_id":"req-1","program":"","state":"started","request_offset":3,"at":4,"worker":"w"}"#,
            #"{"request_id":"req-1","program":"prog a","state":"started","request_offset":3,"at":4,"worker":"w"}"#,
            #"{"request_id":"req-1","program":7,"state":"started","request_offset":3,"at":4,"worker":"w"}"#,
        ]
        for text in bad {
            #expect(CallMarker.decode(Array(text.utf8)) == nil, "\(text.prefix(120))")
        }
        #expect(CallMarker.requestID(fromKey: Array("req-1".utf8)) == "req-1")
        #expect(CallMarker.requestID(fromKey: Array("req 1".utf8)) == nil)
        #expect(CallMarker.requestID(fromKey: nil) == nil)
    }

    @Test("x-replay-of accepts only topic:partition:offset within 256 bytes")
    func replayReferences() {
        #expect(ReplayReference("provisioning.dlq:0:42") == ReplayReference(topic: "provisioning.dlq", partition: 0, offset: 42))
        #expect(ReplayReference("a_b-c.d:2147483647:9223372036854775807") != nil)
        let refused = ["", "dlq", "dlq:0", "dlq:0:1:2", ":0:1", "dlq:-1:1", "dlq:0:-1", "dlq:+1:1", "dlq: 1:1", "dlq:2147483648:1",
                       "dlq:0:9223372036854775808", "bad topic:0:1", "..:0:1", "t\u{0}:0:1", "dlq:0:1 ",
                       String(repeating: "t", count: 250) + ":0:1", "dlq:0:" + String(repeating: "0", count: 300)]
        for text in refused {
            #expect(ReplayReference(text) == nil, "\(text.prefix(60))")
        }
        #expect(ReplayReference(bytes: Array("dlq:0:1".utf8)) != nil)
        #expect(ReplayReference(bytes: [0xFF, 0x3A, 0x30, 0x3A, 0x31]) == nil)
    }

    @Test("dead-letter provenance with a header out of range is refused with a reason")
    func outOfRangeProvenanceIsRefused() throws {
        let provenance = DeadLetterProvenance(
            originalTopic: "provisioning.requests", originalPartition: 1, originalOffset: 5, originalTimestampMs: 1_700_000_000_000,
            code: .publishFailed, reason: "r", attempts: 2, firstFailedAtMs: 1_700_000_000_000, failedAtMs: 1_700_000_001_000,
            worker: "w", group: "g", isReplayable: true, replayableReason: "ok")
        #expect(DeadLetterProvenance(headers: provenance.headers) == provenance)
        let cases: [(String, String)] = [
            (DeadLetterHeader.originalOffset, "-1"), (DeadLetterHeader.originalPartition, "-3"),
            (DeadLetterHeader.originalTimestamp, "-9223372036854775808"), (DeadLetterHeader.originalTimestamp, "9223372036854775807"),
            (DeadLetterHeader.attempts, "9223372036854775807"), (DeadLetterHeader.attempts, "0"),
            (DeadLetterHeader.originalTopic, "not a topic"), (DeadLetterHeader.failedAt, "3001-01-01T00:00:00Z"),
            (DeadLetterHeader.firstFailedAt, "0000-01-01T00:00:00Z"), (DeadLetterHeader.reason, String(repeating: "x", count: 2_000)),
            (DeadLetterHeader.code, String(repeating: "c", count: 65)),
        ]
        for (name, value) in cases {
            let headers = provenance.headers + [KafkaHeader(key: name, string: value)]
            #expect(DeadLetterProvenance(headers: headers) == nil, "\(name) = \(value.prefix(40))")
            guard case .failure(let problem) = DeadLetterProvenance.read(headers: headers) else { continue }
            #expect(problem.reason.contains(name), "\(problem.reason)")
            let entry = DeadLetterEntry(message: KafkaMessage(topic: "provisioning.dlq", partition: 0, offset: 1, key: nil, value: [],
                                                              headers: headers, timestampMs: .min))
            #expect(entry.provenance == nil && entry.provenanceProblem == problem)
        }
    }

    @Test("windows, timers and tiers saturate instead of overflowing on extreme times")
    func extremeTimesDoNotTrap() {
        let policy = DeadlinePolicy()
        for timestamp in [Int64.min, Int64.max] {
            let window = policy.window(kind: .provision, wallet: .applePay, startedAtMs: nil, deadlineMs: nil,
                                       recordTimestampMs: timestamp, receivedAtMs: 1_700_000_000_000)
            _ = policy.admit(window, nowMs: 1_700_000_000_000, minimumIssuerBudgetMs: .max)
            _ = DeadLetterSummary(value: Array(#"{"request_id":"r","wallet":"apple_pay"}"#.utf8), recordTimestampMs: timestamp)
        }
        #expect(DispatchTimer.delayMs(until: .min, nowMs: 1_700_000_000_000) == 0)
        #expect(DispatchTimer.delayMs(until: .max, nowMs: -5) == DispatchTimer.maximumDelayMs)
        #expect(DispatchTimer.delayMs(until: 1_700_000_000_500, nowMs: 1_700_000_000_000) == 500)
        let timer = DispatchTimer(label: "bounds-test")
        timer.schedule(atMs: .min, nowMs: 1_700_000_000_000)
        timer.schedule(atMs: .max, nowMs: .min)
        timer.cancel()
        #expect(ReconcileTiers(delaysMs: [.max]).dueTime(attempt: 1, scheduledAtMs: 1_700_000_000_000) == .max)
    }
}
