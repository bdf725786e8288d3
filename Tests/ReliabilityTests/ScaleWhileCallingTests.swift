import Contract
import Foundation
import Harness
import Kafka
import Observability
import Simulator
import Testing
import TestSupport

extension ReliabilityTests {
    /// Scale-out and scale-in while issuer calls are in flight, as an operator's autoscaler does
    /// it: one `provisioner worker` process takes the whole topic, two more join mid-load, then
    /// one of them leaves by SIGTERM; every call takes seconds, so each rebalance revokes
    /// partitions with calls in flight. Card ids recur, so the issuer answers some calls
    /// `already_provisioned` while its state query says "applied" for the card: a hand-over that
    /// published a reconciled final beside the previous owner's would contradict it. Every request
    /// must end with one final (identical duplicates are counted, never two different finals:
    /// `FinalAnswers`), every final must be true to the simulator's call log and wallet state
    /// (`FinalTruthCheck`), and no handshake may reach the issuer twice.
    @Test("scale 1 → 3 → 2 with slow calls in flight: every request final, no handshake twice, no two different finals")
    func scaleWhileCalling() async throws {
        try await Self.scaleWhileCalling(on: .mockCluster)
    }

    /// The scale scenario on `broker`; its summary line is `scale_while_calling`
    /// (`scale_while_calling_noida`, ...).
    static func scaleWhileCalling(on broker: RigBroker) async throws {
        let partitions = 6
        let total = ReliabilityScale.pick(150, long: 900)
        // 30 s of load: both scale events need calls in flight, so the load has to outlast the
        // group forming around the two joining workers (on librdkafka 2.0.2 under a loaded CI
        // machine that took longer than the 15 s a 10/s load lasted).
        let perSecond = ReliabilityScale.pick(5.0, long: 30.0)
        let callMs = ReliabilityScale.pick(3_000, long: 7_000)
        let cards = ReliabilityScale.pick(40, long: 101)
        // noida-db 0.2.3 can leave a JoinGroup unanswered when members join while a round completes
        // (docs/TESTING.md, "Three Kafkas compared"); librdkafka retries it after
        // max.poll.interval.ms + 3 s, so a shorter interval (still above the 10.2 s drain) lets
        // the group form inside the wait below instead of after 303 s.
        let rig = try await ProcessGroupRig(name: "reliability-scale", partitions: partitions, broker: broker,
                                            noidaConsumerOverrides: ["max.poll.interval.ms": "15000"])
        defer { rig.stop() }
        let (simulator, collector, factory) = (rig.simulator, rig.collector, rig.factory)

        var workers = [try rig.worker("scale-w1")]
        defer { workers.forEach { $0.process.kill() } }
        try #require(await ChildWorker.waitForGroup(workers, partitions: partitions), "the first worker did not take the partitions")
        try rig.warmUp()

        let load = rig.load(perSecond: perSecond, total: total) { index in
            try factory.provision(program: "demo-imprint", wallet: index % 3 == 2 ? .googleWallet : .applePay,
                                  cardID: "pm_scale_\(index % cards)-slow-\(callMs)", requestID: factory.requestID("scale"))
        }
        // A scale event once a quarter of the load is sent (two join), another at half (one leaves).
        var events: [String] = []
        func callsInFlight() -> Int {
            let called = Set(simulator.calls.map(\.handshake))
            let snapshot = collector.snapshot
            return load.sent.filter { called.contains($0.request.handshake ?? "") && snapshot.final($0.request.requestID) == nil }.count
        }
        try #require(await Waiting.until(timeoutMs: 60_000) { load.sent.count >= total / 4 && callsInFlight() >= 2 },
                     "no moment with calls in flight before scaling out")
        events.append("out with \(callsInFlight()) calls in flight")
        for index in 2...3 {
            workers.append(try rig.worker("scale-w\(index)"))
        }
        try #require(await ChildWorker.waitForGroup(workers, partitions: partitions, timeoutMs: 60_000), "three workers did not share the partitions:\n\(ChildWorker.describeGroup(workers))")
        try #require(await Waiting.until(timeoutMs: 60_000) { load.sent.count >= total / 2 && callsInFlight() >= 2 },
                     "no moment with calls in flight before scaling in")
        let leaving = workers[1]
        events.append("in with \(callsInFlight()) calls in flight")
        leaving.process.terminate()
        let termination = try await leaving.process.waitForExit(timeout: .seconds(60))
        #expect(termination == .exited(0), "the worker leaving by SIGTERM did not drain and exit 0: \(termination)")
        await load.finish()
        let planned = load.sent
        #expect(planned.count == total && load.failed.isEmpty, "the load generator could not send every request")

        let ids = planned.map(\.request.requestID)
        let answered = collector.wait(timeoutMs: 120_000) { snapshot in ids.allSatisfy { snapshot.final($0) != nil } }
        let snapshot = collector.snapshot
        let missing = ids.filter { snapshot.final($0) == nil }
        #expect(answered, "\(missing.count) of \(ids.count) requests got no final result: \(missing.prefix(5))")

        let repeated = simulator.calls.filter { $0.count > 1 }
        #expect(repeated.isEmpty, "handshakes sent to the issuer more than once: \(repeated.map { "\($0.cardID) ×\($0.count)" })")
        let conflicts = ids.filter { FinalAnswers.conflict(snapshot.results[$0]?.map(\.result) ?? []) }
        for id in conflicts.prefix(5) {
            for event in snapshot.audit where event.requestID == id {
                print("DIAGNOSTIC scale audit", id, event.atMs, event.stage.rawValue, event.worker ?? "-", event.partition ?? -1, event.offset ?? -1)
            }
        }
        #expect(conflicts.isEmpty, "requests with two different finals: \(conflicts.prefix(5).map { "\($0): \(FinalAnswers.describe(snapshot.results[$0]?.map(\.result) ?? []))" })")
        // Every final is true: compared with the simulator's call log and wallet state (the cards
        // recur on the same devices, so reconciliation must tell this call's token from an earlier one's).
        let untrue = FinalTruthCheck.untrue(planned.map { ($0.request, $0.sentAtMs) }, final: { snapshot.final($0) }, simulator: simulator)
        #expect(untrue.isEmpty, "\(untrue.count) of \(ids.count) finals contradict what the issuer did: \(untrue.prefix(5))")
        let invalid = ids.filter { snapshot.final($0)?.code == .invalidRequest }
        #expect(invalid.isEmpty, "answered invalid_request (a handshake used twice): \(invalid.prefix(5))")

        var statuses: [String: Int] = [:]
        for id in ids { if let final = snapshot.final(id) { statuses[FinalAnswers.key(final), default: 0] += 1 } }
        let duplicated = ids.filter { (snapshot.results[$0]?.filter { $0.result.isFinal }.count ?? 0) > 1 }
        let duplicates = duplicated.count
        // A request is answered twice only when it comes back to a new owner after its answer,
        // before the commit covering it and before its `completed` (published) marker (written
        // right after its result) is in the log: so it was sent before a worker gave its
        // partition up (revoked or lost), and not answered more than a second (ten commit rounds)
        // before that.
        let timestamp = ISO8601DateFormatter()
        timestamp.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let givenUp: [(partitions: Set<Int32>, atMs: Int64)] = workers.flatMap(\.logEntries).compactMap { entry in
            guard let message = entry["msg"]?.stringValue, message.hasPrefix("partitions revoked") || message.hasPrefix("partitions lost"),
                  let list = entry["partitions"]?.stringValue, let at = entry["ts"]?.stringValue.flatMap({ timestamp.date(from: $0) }) else { return nil }
            return (Set(list.split(separator: ",").compactMap { Int32($0) }), Int64((at.timeIntervalSince1970 * 1_000).rounded()))
        }
        let sentBy = Dictionary(planned.map { ($0.request.requestID, $0) }, uniquingKeysWith: { first, _ in first })
        let strayDuplicates = duplicated.filter { id in
            guard let sent = sentBy[id], let firstFinalMs = snapshot.results[id]?.first(where: { $0.result.isFinal })?.consumedAtMs else { return true }
            return !givenUp.contains { $0.partitions.contains(sent.partition) && sent.sentAtMs < $0.atMs && firstFinalMs >= $0.atMs - 1_000 }
        }
        #expect(strayDuplicates.isEmpty, "requests answered twice that were not in flight when their partition changed owner: \(strayDuplicates.prefix(5))")
        if !duplicated.isEmpty || !conflicts.isEmpty {
            for worker in workers {
                for entry in worker.logEntries {
                    let message = entry["msg"]?.stringValue ?? ""
                    guard entry["level"]?.stringValue == "warning" || message.hasPrefix("partitions") || message.contains("commit") else { continue }
                    print("DIAGNOSTIC scale \(worker.name)", entry["ts"]?.stringValue ?? entry["at"]?.stringValue ?? "", message,
                          entry["partitions"]?.stringValue ?? "", entry["error"]?.stringValue ?? "", entry["unfinished"].map { "\($0)" } ?? "")
                }
            }
        }
        for id in duplicated.prefix(3) {
            for event in snapshot.audit where event.requestID == id {
                print("DIAGNOSTIC scale duplicate", id, event.atMs, event.stage.rawValue, event.worker ?? "-", event.partition ?? -1, event.offset ?? -1,
                      event.reason.map { "\($0)" } ?? "")
            }
        }
        let recovered = ids.filter { id in
            snapshot.results[id]?.contains { $0.result.message.contains("a previous worker started this issuer call") } == true
        }.count
        let logs = workers.flatMap(\.logEntries)
        let revoked = logs.filter { $0["msg"]?.stringValue?.hasPrefix("partitions revoked") == true }.count
        let beforeCatchUp = logs.filter { $0["msg"]?.stringValue?.hasPrefix("a record arrived before its partition's marker catch-up") == true }.count
        ReliabilityReport.emit(broker == .mockCluster ? "scale_while_calling" : "scale_while_calling_\(broker.rawValue)", [
            "broker": .string(broker.rawValue),
            "workers_max": ReliabilityReport.int(3), "partitions": ReliabilityReport.int(partitions),
            "requests": ReliabilityReport.int(ids.count), "rate_per_s": .number(JSONNumber(literal: String(perSecond))!),
            "issuer_call_ms": ReliabilityReport.int(callMs), "distinct_cards": ReliabilityReport.int(cards),
            "scale_events": .array(events.map { .string($0) }),
            "final_results": ReliabilityReport.int(ids.count - missing.count), "lost": ReliabilityReport.int(missing.count),
            "final_answers": ReliabilityReport.counts(statuses),
            "handshakes_called_twice": ReliabilityReport.int(repeated.count),
            "requests_with_two_identical_finals": ReliabilityReport.int(duplicates),
            "conflicting_final_results": ReliabilityReport.int(conflicts.count),
            "untrue_finals": ReliabilityReport.int(untrue.count),
            "recovered_from_marker": ReliabilityReport.int(recovered),
            "partitions_revoked": ReliabilityReport.int(revoked),
            "records_before_catch_up_rewound": ReliabilityReport.int(beforeCatchUp),
        ])
    }
}
