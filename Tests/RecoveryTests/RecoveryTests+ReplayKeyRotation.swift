import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing
import TestSupport

extension RecoveryTests {
    /// `provisioner dlq replay --config` with three named replay keys in `dlq.replay_keys`: one
    /// retired, one inside its overlap, the current one. Must hold: a dead letter sealed with the
    /// key inside its overlap is replayed (signed with the current key, which it names) and
    /// answered; one sealed with the retired key, and one naming a key the configuration does not
    /// list, are refused with that reason and never produced; no key value is printed.
    @Test("dlq replay --config with dlq.replay_keys: dead letters of a key inside its overlap replay, a retired or unknown key's are refused")
    func dlqReplayWithRotatedKeys() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        let keys = ["gone": "replay-gone-" + Crypto.hex(Crypto.randomBytes(16)), "old": "replay-old-" + Crypto.hex(Crypto.randomBytes(16)),
                    "new": "replay-new-" + Crypto.hex(Crypto.randomBytes(16))]
        let environment = ["RK_GONE": keys["gone"]!, "RK_OLD": keys["old"]!, "RK_NEW": keys["new"]!]
        let now = Timestamps.nowMs()
        let list: [(id: String, variable: String, notAfter: Int64?)] = [("gone", "RK_GONE", now - 60_000), ("old", "RK_OLD", now + 3_600_000),
                                                                        ("new", "RK_NEW", nil)]
        try rig.startWorker(try rig.configuration(workerID: "worker-replay-keys"))
        let topics = rig.topics

        // The tool's configuration: the stack's, with the replay keys.
        var entries: [JSONValue] = []
        for key in list {
            var entry: [String: JSONValue] = ["id": .string(key.id), "secret_env": .string(key.variable)]
            if let notAfter = key.notAfter { entry["not_after"] = .string(RFC3339.format(milliseconds: notAfter)) }
            entries.append(.object(entry))
        }
        let document = try JSONParser().parse(Array(rig.stack.configurationFileText(groupID: rig.group).utf8))
        let text = document.setting("dlq", JSONValue.object(["replay_keys": JSONValue.array(entries)]))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("replay-keys"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configPath = directory.appendingPathComponent("worker.json").path
        try Data(JSONWriter.encode(text)).write(to: URL(fileURLWithPath: configPath))

        func letter(_ request: GeneratedRequest, offset: Int64, seal: DeadLetterSeal) -> KafkaOutgoingMessage {
            let verdict = DeadLetterReplayPolicy.verdict(code: .publishFailed, summary: DeadLetterSummary(value: request.value, recordTimestampMs: now),
                                                         issuerMayHaveBeenCalled: false, nowMs: now)
            return DeadLetterBuilder(deadLetterTopic: topics.deadLetters, parkedTopic: topics.parked, worker: "worker-0", group: rig.group, seal: seal)
                .letter(key: request.key, value: request.value, headers: [],
                        source: .init(partition: TopicPartition(topic: topics.requests, partition: 0), offset: offset, timestampMs: now),
                        code: .publishFailed, reason: "the result could not be published", attempts: 1, firstFailedAtMs: now, nowMs: now,
                        replayOf: nil, replay: verdict, parkedReason: "").message
        }
        func request() throws -> GeneratedRequest {
            try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: Self.card(), requestID: rig.factory.requestID("rotated"))
        }
        let inOverlap = try request()
        let retired = try request()
        let unknown = try request()
        _ = try await rig.producer.send(letter(inOverlap, offset: 30, seal: DeadLetterSeal(key: Sensitive(keys["old"]!), keyID: "old")))
        _ = try await rig.producer.send(letter(retired, offset: 31, seal: DeadLetterSeal(key: Sensitive(keys["gone"]!), keyID: "gone")))
        _ = try await rig.producer.send(letter(unknown, offset: 32, seal: DeadLetterSeal(key: Sensitive(keys["new"]!), keyID: "elsewhere")))

        let tool = OperatorTool(bootstrap: rig.bootstrap, configPath: configPath, environment: environment)
        let run = try await tool.dlq(["replay", "--json", "--operator", "ops.rita"])
        #expect(run.status == 1, "two entries are refused: \(run)")
        let outcomes = try DLQListing.entries(json: run.standardOutput)
        func outcome(_ request: GeneratedRequest) -> (result: String, detail: String)? {
            outcomes.first { $0["request_id"]?.stringValue == request.requestID }
                .map { ($0["result"]?.stringValue ?? "", $0["detail"]?.stringValue ?? "") }
        }
        #expect(outcome(inOverlap)?.result == "replayed", "\(run)")
        for (request, reason) in [(retired, "sealed with replay key 'gone', retired at"), (unknown, "sealed with replay key 'elsewhere', which this tool does not hold")] {
            #expect(outcome(request)?.result == "refused" && outcome(request)?.detail.contains(reason) == true,
                    "\(request.requestID): expected '\(reason)', got \(String(describing: outcome(request)))")
        }
        for value in keys.values { #expect(!run.everything.contains(value), "a replay key was printed") }

        let snapshot = try await rig.wait(for: "the answer to the replay of \(inOverlap.requestID)") { $0.final(inOverlap.requestID) != nil }
        #expect(snapshot.final(inOverlap.requestID)?.status == .provisioned)
        let replays = try await KafkaTestReader(bootstrapServers: rig.bootstrap).readExisting(topic: topics.requests)
            .filter { $0.header(DeadLetterHeader.replayOf) != nil }
        #expect(replays.map(\.value) == [inOverlap.value], "only the replay inside the overlap was produced")
        #expect(replays.first?.header(RequestSignature.keyIDHeader).map { String(decoding: $0, as: UTF8.self) } == "new",
                "the replay is not signed with the current key")
    }
}
