import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing

/// Calls for one card never overlap and follow produce order, while
/// different cards of one partition are called in parallel.
@Suite("End to end: per-card ordering and parallelism", .serialized, .timeLimit(.minutes(10)))
struct OrderingTests {
    /// Start and end of each request's issuer call, from its audit events.
    private static func callWindows(_ ids: [String], audit: [AuditEvent]) -> [String: (started: Int64, responded: Int64)] {
        var windows: [String: (started: Int64, responded: Int64)] = [:]
        for id in ids {
            guard let started = audit.first(where: { $0.requestID == id && $0.stage == .issuerCallStarted })?.atMs,
                  let responded = audit.first(where: { $0.requestID == id && $0.stage == .issuerResponded })?.atMs else { continue }
            windows[id] = (started, responded)
        }
        return windows
    }

    @Test("requests for the same card call the issuer one at a time, in produce order")
    func sameCardCallsAreSerialAndOrdered() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try rig.startWorker()
        try rig.formGroupAndWarmUp()

        // Legacy Google Pay: every request brings a new device, so the simulator provisions the
        // same card again (no 409), and each call takes at least `delay` ms.
        let delay: Int64 = 200
        let cardID = "pm_order_\(Crypto.hex(Crypto.randomBytes(4)))-slow-\(delay)"
        let requests = try (0..<6).map { _ in try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: cardID) }
        for request in requests { try rig.send(request) }
        let ids = requests.map(\.requestID)
        try #require(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")
        let arrived = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            Self.callWindows(ids, audit: snapshot.audit).count == ids.count
        }
        try #require(arrived, "issuer_call_started / issuer_responded audit events missing")
        let snapshot = rig.collector.snapshot
        for id in ids { #expect(snapshot.final(id)?.status == .provisioned) }

        let windows = Self.callWindows(ids, audit: snapshot.audit)
        let byStart = ids.sorted { windows[$0]!.started < windows[$1]!.started }
        #expect(byStart == ids, "issuer calls did not start in produce order")
        for (previous, next) in zip(ids, ids.dropFirst()) {
            // The next call may start only once the previous one was answered. The previous
            // answer came no earlier than its start plus the issuer time the worker measured for it
            // (`latency_ms` of issuer_responded: the call began after the start was stamped); the
            // responded event itself is stamped later still (after the payload is sealed), so it
            // cannot serve as the end. 1 ms for both figures being whole milliseconds.
            let issuerMs = try #require(snapshot.audit.first { $0.requestID == previous && $0.stage == .issuerResponded }?.latencyMs)
            #expect(issuerMs >= delay, "the simulator holds each call \(delay) ms; the worker measured \(issuerMs)")
            let answeredBy = windows[previous]!.started + issuerMs
            #expect(windows[next]!.started >= answeredBy - 1,
                    "a call started \(answeredBy - windows[next]!.started) ms before the previous call for the same card was answered")
        }
        let calls = rig.simulatorCalls(card: cardID)
        #expect(calls.reduce(0) { $0 + $1.count } == ids.count, "the simulator saw \(calls) for the card")
    }

    @Test("different slow cards in one partition are called in parallel")
    func differentCardsInOnePartitionRunInParallel() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try rig.startWorker()
        try rig.formGroupAndWarmUp()

        let delay: Int64 = 2_000
        let count = 5
        let requests = try (0..<count).map { index in
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay,
                                      cardID: "pm_par\(index)_\(Crypto.hex(Crypto.randomBytes(4)))-slow-\(delay)")
        }
        for request in requests { try rig.send(request, partition: 1) }
        let ids = requests.map(\.requestID)
        try #require(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")
        let arrived = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            Self.callWindows(ids, audit: snapshot.audit).count == ids.count
        }
        try #require(arrived, "issuer_call_started / issuer_responded audit events missing")
        let snapshot = rig.collector.snapshot
        for id in ids {
            #expect(snapshot.final(id)?.status == .provisioned)
            #expect(rig.audit(id, .received).first?.partition == 1, "request not read from partition 1")
        }
        let windows = Self.callWindows(ids, audit: snapshot.audit).values
        let first = windows.map(\.started).min()!
        let last = windows.map(\.responded).max()!
        // One at a time would take at least count × delay; in parallel about one delay.
        let span = last - first
        #expect(span < Int64(count) * delay / 2, "\(count) calls of \(delay) ms took \(span) ms from first start to last answer")
        // Every call started before the first one was answered: they all overlapped.
        let firstAnswer = windows.map(\.responded).min()!
        #expect(windows.allSatisfy { $0.started < firstAnswer }, "some calls waited for another card's call to finish")
    }
}
