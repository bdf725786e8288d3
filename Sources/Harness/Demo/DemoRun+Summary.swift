import Contract
import Foundation
import Observability
import Simulator

extension DemoRun {
    static func summarize(_ cases: [DemoCase], snapshot: ResultCollector.Snapshot, producedAt: [String: Int64], registries: [MetricsRegistry],
                          logs: DemoWarningCounter, options: DemoOptions, elapsedMs: Int64) -> DemoReport {
        var mismatches: [(String, String, String)] = []
        var latencies: [String: [Int64]] = [:]
        var verified = 0
        var verifiable = 0
        var deadlineMisses = 0
        var reconciled = 0
        for demoCase in cases {
            if let unmet = demoCase.unmet(in: snapshot) { mismatches.append((demoCase.label, unmet.expected, unmet.got)) }
            let id = demoCase.request.requestID
            let received = snapshot.results[id] ?? []
            guard case .final = demoCase.expectation, let final = received.first(where: { $0.result.isFinal })?.result else { continue }
            if final.attempt > 1 { reconciled += 1 }
            if let first = received.first {
                let timing = first.result.timing
                if let start = producedAt[id] {
                    latencies[demoCase.request.program, default: []].append(first.consumedAtMs - start)
                }
                if let published = timing.publishedAtMs, let deadline = timing.deadlineMs, published > deadline - 1_000,
                   let received = timing.receivedAtMs, received < deadline - 1_000 {
                    deadlineMisses += 1
                }
            }
            if final.status == .provisioned, final.attempt == 1, let jwe = final.payload, let key = demoCase.request.replyKey {
                verifiable += 1
                if verify(jwe, key: key, request: demoCase.request) { verified += 1 }
            }
        }
        var statusCounts: [String: Int] = [:]
        for received in snapshot.results.values {
            if let final = received.first(where: { $0.result.isFinal })?.result { statusCounts[final.status.rawValue, default: 0] += 1 }
        }
        let all = latencies.values.flatMap { $0 }.sorted()
        func total(_ name: String) -> Int { Int(registries.reduce(0) { $0 + $1.total(name) }) }
        let workerMisses = total("provisioner_deadline_misses_total")
        let duplicates = total("provisioner_duplicates_ignored_total")
        let refusals = total("provisioner_refusals_total")
        let breakerChanges = total("provisioner_breaker_transitions_total")
        let warnings = logs.count
        let succeeded = mismatches.isEmpty && deadlineMisses == 0 && workerMisses == 0 && verified == verifiable

        var lines = [
            "Provisioner demo: \(cases.count) requests, \(options.workers) worker(s) in one consumer group, \(options.partitions) partitions,",
            "embedded Kafka (librdkafka mock cluster) and issuer simulator (Imprint, DCS, Gnosis Pay, Worldpay); \(String(format: "%.1f", Double(elapsedMs) / 1000)) s",
            "",
        ]
        lines.append(TextTable(headers: ["FINAL STATUS", "REQUESTS"], rows: statusCounts.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] },
                               rightAligned: [1]).rendered)
        lines.append("")
        var programRows: [[String]] = latencies.keys.sorted().map { program in
            let values = latencies[program]!.sorted()
            return [program, String(values.count), ms(percentile(values, 0.5)), ms(percentile(values, 0.95)), ms(percentile(values, 0.99)), ms(values.last)]
        }
        programRows.append(["all", String(all.count), ms(percentile(all, 0.5)), ms(percentile(all, 0.95)), ms(percentile(all, 0.99)), ms(all.last)])
        lines.append(TextTable(headers: ["PROGRAM", "ANSWERED", "P50", "P95", "P99", "MAX"], rows: programRows, rightAligned: [1, 2, 3, 4, 5]).rendered)
        lines.append("  (first answer, from the request produced to its result consumed from Kafka, all requests sent in one burst;")
        lines.append("   includes the slow, hanging, expired and timed-out cards by design)")
        lines.append("")
        lines.append(TextTable(headers: ["CHECK", "VALUE"], rows: [
            ["expectations met", "\(cases.count - mismatches.count) of \(cases.count)"],
            ["results published after deadline - margin", "\(deadlineMisses) (worker metric: \(workerMisses))"],
            ["payloads decrypted and verified", "\(verified) of \(verifiable) (JWE to reply.jwk; Apple pass data with the device key)"],
            ["reconciled after 504 or timeout", String(reconciled)],
            ["dead letters", String(snapshot.deadLetters.count)],
            ["duplicates ignored", String(duplicates)],
            ["refused without a call (breaker, rate limit)", String(refusals)],
            ["circuit breaker state changes", String(breakerChanges)],
            ["worker warnings and errors logged", String(warnings)],
        ]).rendered)
        if !mismatches.isEmpty {
            lines.append("")
            lines.append(TextTable(headers: ["MISMATCH", "EXPECTED", "GOT"], rows: mismatches.prefix(20).map { [$0.0, $0.1, $0.2] }).rendered)
        }
        lines.append("")
        lines.append(succeeded ? "demo passed: every request got its expected final result" : "demo FAILED: see the checks above")

        var writer = JSONWriter()
        writer.beginObject()
        writer.key("requests"); writer.integer(Int64(cases.count))
        writer.key("expectations_met"); writer.integer(Int64(cases.count - mismatches.count))
        writer.key("statuses"); writer.beginObject()
        for (status, count) in statusCounts.sorted(by: { $0.key < $1.key }) { writer.key(status); writer.integer(Int64(count)) }
        writer.endObject()
        writer.key("latency_ms"); writer.beginObject()
        for (name, q) in [("p50", 0.5), ("p95", 0.95), ("p99", 0.99)] { writer.key(name); writer.integer(orNull: percentile(all, q)) }
        writer.key("max"); writer.integer(orNull: all.last)
        writer.endObject()
        writer.key("deadline_misses"); writer.integer(Int64(deadlineMisses + workerMisses))
        writer.key("payloads_verified"); writer.integer(Int64(verified))
        writer.key("payloads_checked"); writer.integer(Int64(verifiable))
        writer.key("reconciled"); writer.integer(Int64(reconciled))
        writer.key("dead_letters"); writer.integer(Int64(snapshot.deadLetters.count))
        writer.key("duplicates_ignored"); writer.integer(Int64(duplicates))
        writer.key("elapsed_ms"); writer.integer(elapsedMs)
        writer.key("succeeded"); writer.bool(succeeded)
        writer.endObject()
        return DemoReport(text: lines.joined(separator: "\n"), json: writer.text, succeeded: succeeded)
    }

    /// Decrypts the result's JWE with the reply key and, for Apple, the pass data with the device key.
    static func verify(_ jwe: String, key: ReplyPrivateKey, request: GeneratedRequest) -> Bool {
        guard let plaintext = try? JWE.decrypt(jwe, with: key),
              let payload = try? ProvisioningPayload.decode(plaintext: plaintext, wallet: request.wallet) else { return false }
        switch payload {
        case .apple(_, let encrypted, let ephemeral):
            guard let leaf = request.appleLeafKey,
                  let card = try? ApplePassDecryptor.decryptJSON(encryptedPassData: encrypted.revealed, ephemeralPublicKey: ephemeral.revealed,
                                                                 leafPrivateKey: leaf) else { return false }
            return card.objectValue?.isEmpty == false
        case .googleWallet(let opaque, _), .googlePay(let opaque, _, _, _):
            return !opaque.revealed.isEmpty
        }
    }

    static func percentile(_ sorted: [Int64], _ q: Double) -> Int64? {
        guard !sorted.isEmpty else { return nil }
        return sorted[min(sorted.count - 1, Int((q * Double(sorted.count)).rounded(.up)) - 1 < 0 ? 0 : Int((q * Double(sorted.count)).rounded(.up)) - 1)]
    }

    static func ms(_ value: Int64?) -> String {
        guard let value else { return "-" }
        return value >= 10_000 ? String(format: "%.1f s", Double(value) / 1000) : "\(value) ms"
    }
}
