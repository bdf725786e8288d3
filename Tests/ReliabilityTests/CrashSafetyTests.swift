import Contract
import Foundation
import Harness
import Kafka
import Observability
import Simulator
import Testing
import TestSupport

extension ReliabilityTests {
    /// Three `provisioner worker` processes share a group; slow issuer calls keep several in flight;
    /// one worker is killed with SIGKILL while it has calls in flight. The new owners must find the
    /// `started` markers and reconcile instead of calling again: every request gets a final result
    /// and the simulator's call log shows no handshake twice. Card ids recur (each one every few
    /// seconds, as a card added to several wallets), so the issuer answers some calls
    /// `already_provisioned` while its state query says "applied" for the card: a reconciliation
    /// that published its own final beside the previous owner's would contradict it. No request
    /// may have two different finals (status, code, next action, payload present: `FinalAnswers`).
    @Test("kill -9 of a worker mid-call: every request answered, no handshake sent to the issuer twice")
    func killedWorkerMidCall() async throws {
        try await Self.killedWorkerMidCall(on: .mockCluster)
    }

    /// The kill -9 scenario on `broker` (on the mock cluster the markers partitions' leaders move
    /// to another broker before each kill too); its summary line is `crash` (`crash_noida`, ...).
    /// noida-db never expires a killed member's session, so its partitions are never re-assigned
    /// (docs/RELIABILITY.md, "Known limits"): there every request on the killed worker's partitions after the
    /// kill may stay unanswered, and everything else must hold as on the mock (every other request
    /// answered, no handshake twice, no two different finals).
    static func killedWorkerMidCall(on broker: RigBroker) async throws {
        let partitions = 6
        let total = ReliabilityScale.pick(72, long: 600)
        let perSecond = ReliabilityScale.pick(8.0, long: 12.0)
        let kills = ReliabilityScale.pick(1, long: 3)
        // Distinct card ids: each recurs about every three seconds of load.
        let cards = ReliabilityScale.pick(24, long: 101)
        let rig = try await ProcessGroupRig(name: "reliability-crash", partitions: partitions, broker: broker)
        defer { rig.stop() }
        let (simulator, collector, factory) = (rig.simulator, rig.collector, rig.factory)

        var workers = try (1...3).map { try rig.worker("crash-w\($0)") }
        defer { workers.forEach { $0.process.kill() } }
        try #require(await ChildWorker.waitForGroup(workers, partitions: partitions), "the three worker processes did not share the partitions")
        try rig.warmUp()

        // Apple Pay and Google Wallet through Imprint (which has a state API), every call 1.5 s. Each
        // request is made when it is sent, so its 20 s Apple window starts then.
        let load = rig.load(perSecond: perSecond, total: total) { index in
            try factory.provision(program: "demo-imprint", wallet: index % 3 == 2 ? .googleWallet : .applePay,
                                  cardID: "pm_crash_\(index % cards)-slow-1500", requestID: factory.requestID("crash"))
        }

        // Kill a worker while it has issuer calls in flight: requests on its partitions that reached
        // the simulator and have no result yet.
        var killed: [(worker: String, inFlight: Int, atMs: Int64)] = []
        // Requests partitions the killed workers owned when killed.
        var orphaned: Set<Int32> = []
        var leaderMoves = 0
        for _ in 0..<kills {
            let victims = workers.filter(\.isRunning)
            guard victims.count >= 2, let victim = victims.first else { break }
            var inFlight = 0
            let found = await Waiting.until(timeoutMs: 30_000) {
                let planned = load.sent
                // Kill while the load runs: kill k of n after (k + 1)/(n + 2) of it was sent.
                guard planned.count >= total * (killed.count + 1) / (kills + 2) else { return false }
                let owned = victim.ownedPartitions
                let called = Set(simulator.calls.map(\.handshake))
                let snapshot = collector.snapshot
                inFlight = planned.filter { item in
                    owned.contains(item.partition) && called.contains(item.request.handshake ?? "")
                        && snapshot.results[item.request.requestID] == nil
                }.count
                return inFlight >= 2
            }
            try #require(found, "no moment with two calls in flight on \(victim.name)")
            // Move every markers partition to another broker first: the survivors' marker readers
            // then hold stale leaders and their first catch-up read fails (NOT_LEADER_FOR_PARTITION);
            // a new owner must retry it rather than resume without the markers.
            if let cluster = rig.mockCluster {
                for partition in 0..<Int32(partitions) {
                    let leader = cluster.brokerIDs[(Int(partition) + killed.count + 1) % cluster.brokerIDs.count]
                    if cluster.setPartitionLeader(topic: rig.topics.markers, partition: partition, brokerID: leader) == nil { leaderMoves += 1 }
                }
            }
            orphaned.formUnion(victim.ownedPartitions)
            victim.process.kill()
            killed.append((victim.name, inFlight, Timestamps.nowMs()))
            _ = try await victim.process.waitForExit(timeout: .seconds(10))
            if kills > 1 {
                // Replace it so the group keeps three members, and wait for the group to settle.
                let replacement = try rig.worker("crash-w\(workers.count + 1)")
                workers.append(replacement)
                try #require(await ChildWorker.waitForGroup(workers.filter(\.isRunning), partitions: partitions, timeoutMs: 60_000))
            }
        }
        await load.finish()
        let planned = load.sent
        #expect(planned.count == total && load.failed.isEmpty, "the load generator could not send every request")

        let ids = planned.map(\.request.requestID)
        // On a broker that never re-assigns a killed member's partitions, only the others' requests can be answered.
        let mayStayUnanswered = !broker.reassignsKilledMembers ? Set(planned.filter { orphaned.contains($0.partition) }.map(\.request.requestID)) : []
        let answered = collector.wait(timeoutMs: 120_000) { snapshot in
            ids.allSatisfy { snapshot.final($0) != nil || mayStayUnanswered.contains($0) }
        }
        let snapshot = collector.snapshot
        let missing = ids.filter { snapshot.final($0) == nil }
        if !answered {
            // What the workers said about markers and partitions, in the test output (the CI log
            // alone explains the failure; nothing is left behind on the machine).
            for worker in workers {
                for line in worker.process.standardErrorLines where line.contains("marker") || line.contains("partitions") {
                    print("DIAGNOSTIC crash \(worker.name)", line)
                }
            }
        }
        let lost = missing.filter { !mayStayUnanswered.contains($0) }
        #expect(answered && lost.isEmpty, "\(lost.count) of \(ids.count) requests got no final result: \(lost.prefix(5))")

        // No handshake reached the issuer twice.
        let calls = simulator.calls
        let repeated = calls.filter { $0.count > 1 }
        #expect(repeated.isEmpty, "handshakes sent to the issuer more than once: \(repeated.map { "\($0.cardID) ×\($0.count)" })")
        let handshakes = Set(planned.compactMap(\.request.handshake))
        let calledOnce = calls.filter { handshakes.contains($0.handshake) }.count

        // The crash was really mid-call: some requests were recovered from their `started` marker.
        let recovered = ids.filter { id in
            snapshot.results[id]?.contains { !$0.result.isFinal && $0.result.message.contains("a previous worker started this issuer call") } == true
        }
        if broker.reassignsKilledMembers {
            #expect(!recovered.isEmpty, "no request was recovered from a started marker: the kill did not hit a call in flight")
        }
        var statuses: [String: Int] = [:]
        for id in ids { if let final = snapshot.final(id) { statuses[final.status.rawValue, default: 0] += 1 } }
        let invalid = ids.filter { snapshot.final($0)?.code == .invalidRequest }
        #expect(invalid.isEmpty, "a request was answered invalid_request (a second call with a used nonce answers that): \(invalid.prefix(5))")
        let recoveredFinals = recovered.compactMap { snapshot.final($0)?.status.rawValue }
        #expect(recoveredFinals.allSatisfy { ["provisioned", "not_provisioned", "rejected"].contains($0) },
                "a recovered request ends with the previous owner's decision or a reconciliation through Imprint's state API: \(recoveredFinals)")
        let survivors = workers.filter(\.isRunning)
        #expect(survivors.count == workers.count - killed.count, "a worker that was not killed stopped")
        let catchUpRetries = workers.flatMap(\.logEntries).filter { $0["msg"]?.stringValue?.hasPrefix("marker catch-up failed") == true }.count
        let duplicatesIgnored = snapshot.audit.filter { $0.stage == .duplicateIgnored && ids.contains($0.requestID ?? "") }.count
        let duplicateResults = ids.filter { (snapshot.results[$0]?.filter { $0.result.isFinal }.count ?? 0) > 1 }.count
        // Identical duplicates have one cause here: a kill between a request's result and its
        // `completed` (published) marker, whose new owner finds only the decision and publishes it
        // again. Those are the killed worker's last answers: calls it had in flight when the kill
        // was decided (a call takes 1.5 s, longer than from that count to the kill), and at most
        // one second of the load's answers per kill whose marker was still queued (the markers'
        // leaders move just before the kill).
        let duplicateBound = killed.reduce(0) { $0 + $1.inFlight } + killed.count * Int(perSecond.rounded(.up))
        #expect(duplicateResults <= duplicateBound,
                "\(duplicateResults) requests answered twice, more than the \(duplicateBound) a kill can leave between a result and its marker")
        // At-least-once: a request may be answered twice, never with two different finals.
        let conflicts = ids.filter { id in FinalAnswers.conflict(snapshot.results[id]?.map(\.result) ?? []) }
        for id in conflicts.prefix(5) {
            let wallet = planned.first { $0.request.requestID == id }?.request.wallet.rawValue ?? "?"
            for received in snapshot.results[id] ?? [] {
                print("DIAGNOSTIC crash", id, wallet, received.result.status.rawValue, received.result.isFinal, received.result.nextAction.rawValue,
                      received.result.message)
            }
            for event in snapshot.audit where event.requestID == id {
                print("DIAGNOSTIC crash audit", id, event.atMs, event.stage.rawValue, event.worker ?? "-", event.partition ?? -1, event.offset ?? -1)
            }
        }
        #expect(conflicts.isEmpty, "requests with two different finals: \(conflicts.prefix(5).map { "\($0): \(FinalAnswers.describe(snapshot.results[$0]?.map(\.result) ?? []))" })")
        // Every final is true: compared with the simulator's call log and wallet state.
        let untrue = FinalTruthCheck.untrue(planned.map { ($0.request, $0.sentAtMs) }, final: { snapshot.final($0) }, simulator: simulator)
        #expect(untrue.isEmpty, "\(untrue.count) of \(ids.count) finals contradict what the issuer did: \(untrue.prefix(5))")
        let lastFinalMs = ids.compactMap { id in snapshot.results[id]?.first { $0.result.isFinal }?.consumedAtMs }.max() ?? 0

        ReliabilityReport.emit(broker == .mockCluster ? "crash" : "crash_\(broker.rawValue)", [
            "broker": .string(broker.rawValue),
            "workers": ReliabilityReport.int(3), "brokers": ReliabilityReport.int(rig.mockCluster?.brokerIDs.count ?? 1),
            "partitions": ReliabilityReport.int(partitions), "marker_leader_moves_before_kill": ReliabilityReport.int(leaderMoves),
            "requests": ReliabilityReport.int(ids.count), "rate_per_s": .number(JSONNumber(literal: String(perSecond))!),
            "issuer_call_ms": ReliabilityReport.int(1500), "kills": ReliabilityReport.int(killed.count),
            "in_flight_at_kill": .array(killed.map { ReliabilityReport.int($0.inFlight) }),
            "final_results": ReliabilityReport.int(ids.count - missing.count), "lost": ReliabilityReport.int(lost.count),
            "unanswered_on_partitions_never_reassigned": ReliabilityReport.int(missing.count - lost.count),
            "recovered_from_marker": ReliabilityReport.int(recovered.count), "recovered_final_statuses": ReliabilityReport.counts(
                Dictionary(recoveredFinals.map { ($0, 1) }, uniquingKeysWith: +)),
            "final_statuses": ReliabilityReport.counts(statuses), "handshakes_called": ReliabilityReport.int(calledOnce),
            "handshakes_called_twice": ReliabilityReport.int(repeated.count), "duplicates_ignored": ReliabilityReport.int(duplicatesIgnored),
            "marker_catch_up_retries": ReliabilityReport.int(catchUpRetries),
            "requests_with_two_final_results": ReliabilityReport.int(duplicateResults),
            "conflicting_final_results": ReliabilityReport.int(conflicts.count),
            "untrue_finals": ReliabilityReport.int(untrue.count),
            "last_final_after_kill_ms": ReliabilityReport.int(max(0, lastFinalMs - (killed.first?.atMs ?? lastFinalMs))),
        ])
    }
}
