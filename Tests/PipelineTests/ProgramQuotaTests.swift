import Contract
import Foundation
import Harness
import Pipeline
import Testing
import TestSupport

/// Per-program quotas on a worker, end to end (embedded broker, the simulator over HTTP): one
/// program's flood of answered requests pushes only its own answers out of the duplicate horizon,
/// and one program at its `max_unsettled` cap does not hold another program's requests back.
@Suite("End to end: per-program quotas", .serialized, .timeLimit(.minutes(10)))
struct ProgramQuotaTests {
    /// Shares of the demo configuration's horizon budget: its four programs and `other`.
    static let shares = DemoConfiguration.programs.count + 1

    @Test("a flood of another program's invalid requests, then a restart: a copy of an answered request is still a duplicate, the issuer called once")
    func floodKeepsOtherProgramsAnswers() throws {
        let rig = try PipelineRig(partitions: 2)
        defer { rig.stop() }
        // Room for 40 answers per program: the flood below is ten times that.
        let budget = Self.shares * AnsweredIndex.allocatedBytes(maxEntries: 40)
        let adjust: (inout WorkerConfiguration) -> Void = { $0.duplicateIndexMaxBytes = budget }
        let first = try rig.startWorker("before-flood", adjust: adjust)
        try rig.formGroupAndWarmUp()
        let card = "pm_kept_\(Crypto.hex(Crypto.randomBytes(4)))"
        // Without started_at the copy sent later is as fresh as the first: only the horizon stops it.
        let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card, omitStartedAt: true)
        try rig.send(request, partition: 0)
        try #require(rig.waitForFinals([request.requestID]), "the request was not answered")
        // 400 requests a Worldpay program cannot take (provision): each an answer claimed, in the same partition.
        var flood: [String] = []
        for index in 0..<400 {
            let invalid = try rig.factory.provision(program: "demo-worldpay", wallet: .googlePay, cardID: "pm_flood\(index)_\(Crypto.hex(Crypto.randomBytes(3)))")
            try rig.send(invalid, partition: 0)
            flood.append(invalid.requestID)
        }
        try #require(rig.waitForFinals(flood), "missing: \(rig.missingFinals(flood).prefix(5))")
        #expect(flood.allSatisfy { rig.collector.snapshot.final($0)?.code == .kindUnsupported })
        try rig.expectQuiet("after the flood")
        rig.stack.stopWorker(first)
        // A new worker reads the horizon back from the markers topic: the flood's 400 answers and the one before it.
        let second = try rig.startWorker("after-flood", adjust: adjust)
        try #require(rig.stack.waitForGroup(timeoutMs: 60_000), "the restarted worker did not get the partitions")
        try rig.send(request, partition: 0)
        let requestID = request.requestID
        _ = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            snapshot.audit.contains { $0.requestID == requestID && $0.stage == .duplicateIgnored } || (snapshot.results[requestID]?.count ?? 0) >= 2
        }
        try rig.expectQuiet("after the copy")
        #expect(!rig.audit(requestID, .duplicateIgnored).isEmpty, "the copy was not recognised after the flood")
        #expect(rig.collector.snapshot.results[requestID]?.count == 1, "the request was answered again")
        let calls = rig.simulatorCalls(card: card).reduce(0) { $0 + $1.count }
        #expect(calls == 1, "the issuer was called \(calls) times for the card")
        // The flood pushed out only its own program's answers, counted under its name.
        let metrics = try #require(rig.metrics(of: second))
        let evicted = { (program: String) in metrics.value("provisioner_duplicate_index_evictions_total", labels: ["program": program]) ?? -1 }
        #expect(evicted("demo-worldpay") > 0 && evicted("demo-imprint") == 0, "evictions: worldpay \(evicted("demo-worldpay")), imprint \(evicted("demo-imprint"))")
        #expect((metrics.value("provisioner_duplicate_index_bytes") ?? .infinity) <= Double(budget))
    }

    @Test("one program at its max_unsettled cap: another program's request is answered while the capped program's calls are still running")
    func capDoesNotHoldOthersBack() throws {
        let rig = try PipelineRig(partitions: 2)
        defer { rig.stop() }
        let worker = try rig.startWorker("quota") { configuration in
            configuration.maxPending = 8
            configuration.scheduler.globalLimit = 8
            configuration.programs["demo-imprint"]?.maxUnsettled = 2
        }
        try rig.formGroupAndWarmUp()
        // Twelve requests whose issuer calls take 4 s each.
        let slow = try (0..<12).map { index in
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_cap\(index)_\(Crypto.hex(Crypto.randomBytes(4)))-slow-4000")
        }
        for request in slow { try rig.send(request) }
        let other = try rig.factory.provision(program: "demo-dcs", wallet: .googlePay, cardID: "pm_other_\(Crypto.hex(Crypto.randomBytes(4)))")
        try rig.send(other)
        try #require(rig.waitForFinals([other.requestID], timeoutMs: 30_000), "the other program's request was not answered")
        let atOthersFinal = rig.collector.snapshot
        #expect(atOthersFinal.final(other.requestID)?.status == .provisioned)
        // Without the cap the slow program holds every call slot and max_pending, the partitions
        // pause, and the other program's request waits for the slow calls to end.
        let slowDone = slow.filter { atOthersFinal.final($0.requestID)?.status == .provisioned }
        #expect(slowDone.isEmpty, "\(slowDone.count) slow calls had ended before the other program's request was answered")
        let ids = slow.map(\.requestID)
        try #require(rig.waitForFinals(ids), "missing: \(rig.missingFinals(ids).prefix(5))")
        try rig.expectQuiet()
        let snapshot = rig.collector.snapshot
        let provisioned = ids.filter { snapshot.final($0)?.status == .provisioned }.count
        let refused = ids.filter { snapshot.final($0)?.status == .failed && snapshot.final($0)?.code == .rateLimited }.count
        #expect(provisioned == 2 && refused == 10, "provisioned \(provisioned), rate_limited \(refused): the cap is 2")
        let metrics = try #require(rig.metrics(of: worker))
        #expect(metrics.value("provisioner_refusals_total", labels: ["reason": "max_unsettled", "program": "demo-imprint"]) == 10)
    }

    @Test("a worker leaves no core file: its process's core size limits, soft and hard, are 0 once it has started")
    func workerDumpsNoCore() throws {
        let rig = try PipelineRig(partitions: 1)
        defer { rig.stop() }
        try rig.startWorker("no-core")
        let limits = try String(contentsOfFile: "/proc/self/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        let fields = line.dropFirst("Max core file size".count).split(separator: " ")
        #expect(fields.count >= 2 && fields[0] == "0" && fields[1] == "0", "\(line)")
    }
}
