import Contract
import Foundation
import Kafka
import Pipeline
import Testing
import TestSupport

/// `provisioner topics apply` for real, against noida-db (a separate Kafka-compatible broker
/// process that answers CreateTopics, CreatePartitions, DescribeConfigs and AlterConfigs, unlike
/// librdkafka's mock cluster): it creates the missing topics, raises partitions, updates configs,
/// and a second run finds nothing to do. One node, so the layout asks replication factor 1 and
/// `min.insync.replicas` 1 (the built-in layout's 3 and 2 are refused, as a one-broker Kafka
/// cluster refuses them). The `noida` phase of `scripts/test` runs it.
@Suite("provisioner topics apply on noida-db: create, raise, update, then nothing to do", .serialized, .timeLimit(.minutes(5)))
struct TopicsApplyOnNoidaTests {
    private static func changes(_ run: CommandRun) throws -> [JSONValue] {
        try JSONParser().parse(run.standardOutput)["changes"]?.arrayValue ?? []
    }

    @Test("apply creates five topics, raises two and updates their configs; a second run finds nothing to do")
    func applyThenNothingToDo() async throws {
        let broker = try await NoidaBroker.start()
        defer { broker.kill() }
        // requests and markers exist already with 6 partitions and the broker's default configs.
        let names = TopicNames()
        try broker.createTopics([names.requests, names.markers], partitions: 6)
        let spec = TopicRole.allCases.reduce(try Repository.json("Config/topics.json")) { document, role in
            var configs = document["topics"]?[role.rawValue]?["configs"]?.objectValue ?? [:]
            configs["min.insync.replicas"] = nil
            return document.setting("topics.\(role.rawValue).replication_factor", .integer(1))
                .setting("topics.\(role.rawValue).configs", .object(configs))
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("noida-spec-\(UUID().uuidString).json").path
        try Data(JSONWriter.encode(spec)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let arguments = ["topics", "apply", "--config", Repository.path("Config/demo.json"), "--spec", path, "--json"]
        let environment = ["PROVISIONER_KAFKA__BOOTSTRAP_SERVERS": broker.bootstrapServers]

        let first = try CommandRun.provisioner(arguments, environment: environment)
        #expect(first.status == 0, "\(first)")
        let plan = try JSONParser().parse(first.standardOutput)
        #expect(plan["configs_read"] == .bool(true), "noida-db answers DescribeConfigs: \(first)")
        let changes = try Self.changes(first)
        let actions = Dictionary(grouping: changes) { $0["action"]?.stringValue ?? "" }.mapValues { Set($0.compactMap { $0["topic"]?.stringValue }) }
        #expect(actions["create"] == [names.results, names.audit, names.reconcile, names.deadLetters, names.parked], "\(first)")
        #expect(actions["raise_partitions"] == [names.requests, names.markers], "\(first)")
        #expect(actions["update_configs"] == [names.requests, names.markers], "\(first)")
        #expect(changes.allSatisfy { $0["result"]?.stringValue == "applied" }, "\(first)")
        #expect(plan["applied"] == .integer(Int64(changes.count)))

        // What the broker has now is the layout.
        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": broker.bootstrapServers])
        defer { admin.close() }
        let topics = try admin.listTopics(timeoutMs: 10_000)
        let layout = try TopicLayout.parse(json: String(decoding: JSONWriter.encode(spec), as: UTF8.self))
        for role in TopicRole.allCases {
            let name = role.name(in: names)
            #expect(topics.first { $0.name == name }?.partitions == layout[role]?.partitions, "\(name): \(topics.first { $0.name == name }.map { "\($0.partitions)" } ?? "missing")")
        }
        let configs = try admin.describeTopicConfigs([names.requests, names.audit], timeoutMs: 10_000)
        #expect(configs[names.requests]?["retention.ms"] == layout[.requests]?.configs["retention.ms"], "\(configs[names.requests] ?? [:])")
        #expect(configs[names.audit]?["retention.ms"] == layout[.audit]?.configs["retention.ms"], "\(configs[names.audit] ?? [:])")

        // A second run: nothing to do, nothing changed.
        let second = try CommandRun.provisioner(arguments, environment: environment)
        #expect(second.status == 0, "\(second)")
        let again = try JSONParser().parse(second.standardOutput)
        #expect(again["nothing_to_do"] == .bool(true), "\(second)")
        #expect(try Self.changes(second).isEmpty, "\(second)")
    }
}
