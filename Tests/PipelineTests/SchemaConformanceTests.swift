import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing
import TestSupport

/// Every record the worker emits in an end-to-end run validates against the published
/// schemas (`docs/schemas`), judged by Python `jsonschema`, and declares no member the schemas do
/// not document. The run mixes successes for every issuer and wallet, rejections (ours and the
/// issuers'), an expiry, a duplicate, dead letters (with `dlq.mac`: the worker has a replay key),
/// and 504s reconciled both ways; the markers topic's call markers and keyless fence records are
/// checked too.
@Suite("End to end: emitted records match the published schemas", .serialized, .timeLimit(.minutes(10)))
struct SchemaConformanceTests {
    private static func edited(_ request: GeneratedRequest, _ edit: (inout [String: JSONValue]) -> Void) throws -> GeneratedRequest {
        guard case .object(var members) = try JSONParser().parse(request.value) else { throw TestSupportError("not an object") }
        edit(&members)
        var copy = request
        copy.value = JSONWriter.encode(.object(members))
        return copy
    }

    private static func textHeaders(_ headers: [KafkaHeader]) -> [UInt8] {
        var members: [String: JSONValue] = [:]
        for header in headers { members[header.key] = header.value.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null }
        return JSONWriter.encode(.object(members))
    }

    @Test("results, audit events, dead-letter headers and marker records (fences included) of a mixed run validate against docs/schemas")
    func emittedRecordsValidate() async throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try rig.startWorker(extraEnvironment: ["SCHEMA_REPLAY_KEY": "SchemaReplay" + Crypto.hex(Crypto.randomBytes(12))]) {
            $0.replaySigningSecret = .environment("SCHEMA_REPLAY_KEY")
        }
        try rig.formGroupAndWarmUp()
        let f = rig.factory
        let tag = Crypto.hex(Crypto.randomBytes(4))
        var requests: [GeneratedRequest] = []
        // Successes, per issuer and wallet.
        for (program, wallets) in [("demo-imprint", Wallet.allCases), ("demo-dcs", Wallet.allCases), ("demo-gnosis", [Wallet.applePay])] {
            for wallet in wallets {
                requests.append(try f.provision(program: program, wallet: wallet, cardID: "pm_\(tag)_\(program)_\(wallet.rawValue)",
                                                opcRequested: program != "demo-dcs"))
            }
        }
        requests.append(f.payment(program: "demo-worldpay", transactionReference: "sc-\(tag)"))
        requests.append(f.payment(program: "demo-worldpay", transactionReference: "sc-\(tag)-refused", subscription: true))
        // The issuers' answers: missing, inactive, already provisioned, ineligible device.
        requests.append(try f.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_\(tag)-missing"))
        requests.append(try f.provision(program: "demo-dcs", wallet: .applePay, cardID: "pm_\(tag)-inactive"))
        requests.append(try f.provision(program: "demo-imprint", wallet: .googleWallet, cardID: "pm_\(tag)-provisioned"))
        requests.append(try f.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_\(tag)_d", deviceSuffix: "-ineligible"))
        // Our rejections: unknown program, bad nonce, DCS without the Google OPC, Gnosis Google, kind for the issuer.
        requests.append(try Self.edited(try f.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_\(tag)_u")) {
            $0["program"] = .string("nope")
        })
        requests.append(try Self.edited(try f.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_\(tag)_n")) {
            guard case .object(var apple)? = $0["apple"] else { return }
            apple["nonce"] = .string("not base64!")
            $0["apple"] = .object(apple)
        })
        requests.append(try f.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_\(tag)_opc", opcRequested: true))
        requests.append(try f.provision(program: "demo-gnosis", wallet: .googlePay, cardID: "pm_\(tag)_gg"))
        requests.append(f.payment(program: "demo-imprint", transactionReference: "sc-\(tag)-k"))
        // Too late to call: expired.
        requests.append(try f.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_\(tag)_late",
                                        startedAtMs: Timestamps.nowMs() - 30_000))
        // 504s: reconciled to provisioned (applied) and not_provisioned (not applied).
        let applied = try f.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_\(tag)-timeout-applied")
        let unapplied = try f.provision(program: "demo-imprint", wallet: .googleWallet, cardID: "pm_\(tag)-timeout-unapplied")
        requests += [applied, unapplied]

        let traceparent = KafkaHeader(key: "traceparent", value: Array("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".utf8))
        for request in requests { try rig.send(key: request.key, value: request.value, headers: [traceparent]) }
        // A duplicate, and three messages no result can be made for.
        try rig.send(requests[0])
        let undecodable: [[UInt8]] = [Array("{not json".utf8), Array(#"{"version":1,"program":"demo-imprint"}"#.utf8),
                                      Array(#"{"version":2,"request_id":"sc-v2"}"#.utf8)]
        for value in undecodable { try rig.send(key: Array("bad".utf8), value: value, headers: [traceparent]) }
        // And a well-formed request whose x-replay-of is not topic:partition:offset (dead letter invalid_replay_of).
        let badReplay = try f.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_\(tag)_badreplay")
        try rig.send(key: badReplay.key, value: badReplay.value, headers: [traceparent, KafkaHeader(key: "x-replay-of", string: "not-an-entry")])

        let ids = requests.map(\.requestID)
        try #require(rig.waitForFinals(ids, timeoutMs: 120_000), "no final result for \(rig.missingFinals(ids))")
        try #require(rig.collector.wait(timeoutMs: 30_000) { $0.deadLetters.count >= undecodable.count + 1 }, "the dead letters did not arrive")
        try rig.expectQuiet()

        let reader = KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers)
        let topics = rig.stack.topics
        let results = try await reader.readExisting(topic: topics.results)
        let audit = try await reader.readExisting(topic: topics.audit)
        let deadLetters = try await reader.readExisting(topic: topics.deadLetters)
        let markers = try await reader.readExisting(topic: topics.markers)
        var items: [SchemaChecker.Item] = []
        for (index, message) in results.enumerated() {
            items.append(.init(id: "result \(index)", schema: "result.schema.json", bytes: message.value))
        }
        for (index, message) in audit.enumerated() {
            items.append(.init(id: "audit \(index)", schema: "audit-event.schema.json", bytes: message.value))
        }
        for (index, message) in deadLetters.enumerated() {
            items.append(.init(id: "dead letter \(index)", schema: "dead-letter-headers.schema.json", bytes: Self.textHeaders(message.headers)))
        }
        for (index, message) in markers.enumerated() {
            items.append(.init(id: "marker \(index)", schema: "marker.schema.json", bytes: message.value))
        }
        let verdicts = try SchemaChecker.validate(items)
        for item in items {
            let verdict = try #require(verdicts[item.id])
            #expect(verdict.parsed && verdict.isValid, "\(item.id) does not match \(item.schema): \(verdict.errors) — \(String(decoding: item.bytes, as: UTF8.self).prefix(600))")
            #expect(verdict.undeclared.isEmpty, "\(item.id) has members \(item.schema) does not declare: \(verdict.undeclared)")
        }

        // The run covered what it set out to cover.
        let decoded = results.compactMap { try? ProvisioningResult.decode($0.value) }
        let statuses = Set(decoded.map(\.status.rawValue))
        for status in ["provisioned", "already_provisioned", "rejected", "expired", "indeterminate", "not_provisioned", "authorized", "refused"] {
            #expect(statuses.contains(status), "no \(status) result among \(statuses.sorted())")
        }
        #expect(decoded.contains { $0.payload != nil }, "no encrypted payload")
        #expect(decoded.contains { $0.requestID == applied.requestID && $0.isFinal && $0.status == .provisioned && $0.attempt > 1 },
                "the applied 504 was not reconciled to provisioned")
        let stages = Set(audit.compactMap { try? AuditEvent.decode($0.value).stage.rawValue })
        for stage in ["received", "rejected", "expired", "issuer_call_started", "issuer_responded", "result_published",
                      "reconcile_scheduled", "reconciled", "dead_lettered", "duplicate_ignored"] {
            #expect(stages.contains(stage), "no \(stage) audit event among \(stages.sorted())")
        }
        let codes = Set(deadLetters.compactMap { $0.header("dlq.code").map { String(decoding: $0, as: UTF8.self) } })
        #expect(codes.isSuperset(of: ["not_json", "missing_request_id", "unknown_version", "invalid_replay_of"]), "\(codes.sorted())")
        #expect(deadLetters.allSatisfy { $0.header("dlq.mac") != nil }, "a dead letter without dlq.mac")
        let states = markers.map { (try? JSONParser().parse($0.value))?["state"]?.stringValue }
        #expect(states.contains("fence") && states.contains("started") && states.contains("completed"), "marker states: \(Set(states.compactMap { $0 }).sorted())")
        for (message, state) in zip(markers, states) {
            #expect((state == "fence") == (message.key == nil), "a \(state ?? "?") marker \(message.key == nil ? "without" : "with") a key")
        }
        print("schema conformance: \(results.count) results, \(audit.count) audit events, \(deadLetters.count) dead letters, \(markers.count) markers validated")
    }
}
