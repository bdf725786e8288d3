import Contract
import Foundation
import Kafka
import Pipeline
import Testing
import TestSupport

/// `provisioner topics apply` against `provisioner broker` (librdkafka's mock cluster), as child
/// processes. The mock serves Metadata, so the plan is checked; it answers no admin request, so the
/// apply path must say so and change nothing.
@Suite("provisioner topics apply against provisioner broker", .serialized, .timeLimit(.minutes(5)))
struct TopicsApplyCommandTests {
    /// Short, so the unanswered DescribeConfigs / CreateTopics give up quickly.
    private static let timeout = "1000"

    /// Environment pointing Config/demo.json at the broker, with extra overrides.
    private static func environment(_ broker: EmbeddedBrokerProcess, _ extra: [String: String] = [:]) -> [String: String] {
        ["PROVISIONER_KAFKA__BOOTSTRAP_SERVERS": broker.bootstrapServers].merging(extra) { $1 }
    }

    private static func changes(_ run: CommandRun) throws -> [JSONValue] {
        try JSONParser().parse(run.standardOutput)["changes"]?.arrayValue ?? []
    }

    @Test("dry run on the broker's 6-partition topics: raise partitions, update configs (unknown), create a missing topic")
    func dryRunPlan() async throws {
        let broker = try await EmbeddedBrokerProcess.start(brokers: 3, partitions: 6)
        defer { broker.process.kill() }
        let run = try CommandRun.provisioner(
            ["topics", "apply", "--config", Repository.path("Config/demo.json"), "--dry-run", "--json", "--timeout-ms", Self.timeout],
            environment: Self.environment(broker, ["PROVISIONER_TOPICS__AUDIT": "provisioning.audit.v2"]))
        #expect(run.status == 0, "\(run)")
        let plan = try JSONParser().parse(run.standardOutput)
        #expect(plan["dry_run"] == .bool(true))
        #expect(plan["configs_read"] == .bool(false), "the mock does not answer DescribeConfigs")
        let changes = try Self.changes(run)
        func change(_ topic: String, _ action: String) -> JSONValue? {
            changes.first { $0["topic"]?.stringValue == topic && $0["action"]?.stringValue == action }
        }
        let layout = TopicLayout.production

        // Lower than the layout: raised, markers with requests.
        for (topic, role) in [("provisioning.requests", TopicRole.requests), ("provisioning.markers", .markers), ("provisioning.results", .results)] {
            let raise = try #require(change(topic, "raise_partitions"), "\(topic) in \(run)")
            #expect(raise["current_partitions"] == .integer(6))
            #expect(raise["desired_partitions"] == .integer(Int64(layout[role]?.partitions ?? 0)))
        }
        // Higher than the layout: kept, with a note.
        #expect(change("provisioning.dlq", "raise_partitions") == nil)
        #expect(plan["notes"]?.arrayValue?.contains { $0.stringValue?.contains("provisioning.dlq has 6 partitions") ?? false } ?? false)
        // Existing topics: configs to set, current unknown.
        for topic in ["provisioning.requests", "provisioning.results", "provisioning.reconcile", "provisioning.dlq",
                      "provisioning.dlq.parked", "provisioning.markers"] {
            let update = try #require(change(topic, "update_configs"), "\(topic) in \(run)")
            #expect(update["configs"]?.arrayValue?.allSatisfy { $0["current_known"] == .bool(false) } ?? false)
        }
        // The broker lacks the renamed audit topic: create it with the layout's shape.
        let create = try #require(change("provisioning.audit.v2", "create"), "\(run)")
        #expect(create["desired_partitions"] == .integer(Int64(layout[.audit]?.partitions ?? 0)))
        #expect(create["replication_factor"] == .integer(3))
        #expect(create["configs"]?.arrayValue?.contains { $0["key"] == .string("retention.ms") && $0["desired"] == .string("7776000000") } ?? false)
        #expect(change("provisioning.audit", "update_configs") == nil, "the old audit topic is not in the configuration any more")

        // Nothing changed on the cluster.
        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": broker.bootstrapServers])
        defer { admin.close() }
        let topics = try admin.listTopics(timeoutMs: 5_000)
        #expect(topics.first { $0.name == "provisioning.requests" }?.partitions == 6)
        #expect(!topics.contains { $0.name == "provisioning.audit.v2" })
    }

    @Test("dry run as a table, and with a --spec file")
    func tableAndSpec() async throws {
        let broker = try await EmbeddedBrokerProcess.start(brokers: 1, partitions: 6)
        defer { broker.process.kill() }
        let table = try CommandRun.provisioner(
            ["topics", "apply", "--config", Repository.path("Config/demo.json"), "--dry-run", "--timeout-ms", Self.timeout],
            environment: Self.environment(broker))
        #expect(table.status == 0, "\(table)")
        let lines = table.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("dry run, nothing will be changed") ?? false, "\(table)")
        let header = try #require(lines.first { $0.hasPrefix("ROLE") })
        for column in ["TOPIC", "ACTION", "PARTITIONS", "RF", "CONFIGS"] { #expect(header.contains(column)) }
        let raise = try #require(lines.first { $0.contains("provisioning.requests") && $0.contains("raise partitions") }, "\(table)")
        #expect(raise.contains("6 -> 24"))
        #expect(raise.range(of: "raise partitions")?.lowerBound.utf16Offset(in: raise) == header.range(of: "ACTION")?.lowerBound.utf16Offset(in: header),
                "columns are aligned")
        #expect(lines.contains { $0.contains("update configs") && $0.contains("unknown ->") })
        #expect(lines.contains { $0.hasPrefix("configs: not readable") && $0.contains("did not answer DescribeConfigs") })
        #expect(lines.last?.hasSuffix("dry run: nothing changed") ?? false, "\(table)")

        // A layout whose partition counts the broker already has: nothing to raise or create.
        let spec = TopicRole.allCases.reduce(try Repository.json("Config/topics.json")) { document, role in
            document.setting("topics.\(role.rawValue).partitions", .integer(6))
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("spec-\(UUID().uuidString).json").path
        try Data(JSONWriter.encode(spec)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try CommandRun.provisioner(
            ["topics", "apply", "--config", Repository.path("Config/demo.json"), "--spec", path, "--dry-run", "--json", "--timeout-ms", Self.timeout],
            environment: Self.environment(broker))
        #expect(run.status == 0, "\(run)")
        let actions = try Self.changes(run).compactMap { $0["action"]?.stringValue }
        #expect(!actions.contains("raise_partitions") && !actions.contains("create"), "\(run)")
        #expect(actions.filter { $0 == "update_configs" }.count == TopicRole.allCases.count)
    }

    @Test("apply (no --dry-run) against the mock: fails with one line saying the cluster did not answer, changes nothing")
    func applyReportsTheMockHonestly() async throws {
        let broker = try await EmbeddedBrokerProcess.start(brokers: 1, partitions: 6)
        defer { broker.process.kill() }
        let run = try CommandRun.provisioner(
            ["topics", "apply", "--config", Repository.path("Config/demo.json"), "--timeout-ms", Self.timeout],
            environment: Self.environment(broker))
        #expect(run.status == 1, "\(run)")
        let reasons = run.errorLines.filter { $0.hasPrefix("provisioner topics:") }
        #expect(reasons.count == 1, "\(run)")
        let reason = reasons.first ?? ""
        #expect(reason.contains("nothing changed"))
        #expect(reason.contains("did not answer DescribeConfigs within \(Self.timeout) ms"))
        #expect(reason.contains("mock cluster"))
        #expect(run.standardOutput.isEmpty, "no plan pretends to have been applied: \(run)")

        // Topics missing entirely: the create itself is not answered; the steps say so.
        let renamed = Dictionary(uniqueKeysWithValues: ["REQUESTS", "RESULTS", "AUDIT", "RECONCILE", "DLQ", "DLQ_PARKED", "MARKERS"].map {
            ("PROVISIONER_TOPICS__\($0)", "fresh.\($0.lowercased())")
        })
        let create = try CommandRun.provisioner(
            ["topics", "apply", "--config", Repository.path("Config/demo.json"), "--json", "--timeout-ms", Self.timeout],
            environment: Self.environment(broker, renamed))
        #expect(create.status == 1, "\(create)")
        #expect(create.errorLines.filter { $0.hasPrefix("provisioner topics:") }.count == 1, "\(create)")
        #expect(create.standardError.contains("stopped after 0 of 7 step(s): the cluster did not answer CreateTopics"), "\(create)")
        let results = try Self.changes(create).compactMap { $0["result"]?.stringValue }
        #expect(results == Array(repeating: "unanswered", count: 7), "\(create)")

        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": broker.bootstrapServers])
        defer { admin.close() }
        let topics = try admin.listTopics(timeoutMs: 5_000)
        #expect(topics.first { $0.name == "provisioning.requests" }?.partitions == 6)
        #expect(!topics.contains { $0.name.hasPrefix("fresh.") })
    }

    @Test("the executor on the mock: CreatePartitions and AlterConfigs are not answered either, and the steps say so")
    func executorStopsAtTheFirstUnansweredRequest() async throws {
        let broker = try await EmbeddedBrokerProcess.start(brokers: 1, partitions: 6)
        defer { broker.process.kill() }
        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": broker.bootstrapServers])
        defer { admin.close() }
        let existing = try admin.listTopics(timeoutMs: 5_000)
        let names = TopicNames()
        let current = Dictionary(uniqueKeysWithValues: TopicRole.allCases.map { ($0.name(in: names), TopicLayout.production[$0]?.configs ?? [:]) })

        // Only partition raises (configs as desired): CreatePartitions goes unanswered.
        let raises = try TopicPlan.make(layout: .production, names: names, existing: existing, configs: current)
        #expect(!raises.isEmpty && raises.changes.allSatisfy { $0.action == .raisePartitions })
        let raised = TopicPlanExecutor.apply(raises, admin: admin, timeoutMs: 1_000)
        #expect(raised.stoppedRequest == "CreatePartitions")
        #expect(raised.stoppedBy?.code == .timedOut)
        #expect(raised.appliedCount == 0 && !raised.isComplete)
        #expect(raised.outcomes.allSatisfy { $0.result == .unanswered })

        // A create first: CreateTopics goes unanswered, the raises after it are not attempted.
        let mixed = try TopicPlan.make(layout: .production, names: names, existing: existing.filter { $0.name != names.audit }, configs: current)
        let stopped = TopicPlanExecutor.apply(mixed, admin: admin, timeoutMs: 1_000)
        #expect(stopped.stoppedRequest == "CreateTopics")
        #expect(stopped.outcomes.map(\.result) == mixed.changes.map { $0.action == .create ? .unanswered : .notAttempted })
        #expect(stopped.outcomes.contains { $0.result == .notAttempted })

        // Only a config update (partitions as the broker has them): AlterConfigs goes unanswered.
        var layout = TopicLayout.production
        for role in TopicRole.allCases { layout.topics[role]?.partitions = 6 }
        var stale = current
        stale[names.audit]?["retention.ms"] = "1"
        let updates = try TopicPlan.make(layout: layout, names: names, existing: existing, configs: stale)
        #expect(updates.changes.map(\.action) == [.updateConfigs])
        let updated = TopicPlanExecutor.apply(updates, admin: admin, timeoutMs: 1_000)
        #expect(updated.stoppedRequest == "AlterConfigs")
        #expect(updated.outcomes.map(\.result) == [.unanswered])
        #expect(try admin.listTopics(timeoutMs: 5_000).first { $0.name == names.requests }?.partitions == 6)
    }

    @Test("help documents the mock's limit; bad arguments and layouts end with one line", arguments: [
        (["topics"], Int32(2)),
        (["topics", "apply"], Int32(2)),
        (["topics", "destroy", "--config", "x.json"], Int32(2)),
        (["topics", "apply", "--config", "x.json", "--timeout-ms", "5"], Int32(2)),
        (["topics", "apply", "--config", "/nonexistent/worker.json"], Int32(1)),
    ])
    func arguments(_ arguments: [String], status: Int32) throws {
        let run = try CommandRun.provisioner(arguments)
        #expect(run.status == status, "\(run)")
        #expect(run.errorLines.count == 1 && run.errorLines[0].hasPrefix("provisioner topics:"), "\(run)")
        #expect(run.standardOutput.isEmpty)
    }

    @Test("--help says what the mock cluster does not answer")
    func help() throws {
        let run = try CommandRun.provisioner(["topics", "--help"])
        #expect(run.status == 0)
        let help = run.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("does not answer CreateTopics, CreatePartitions, DescribeConfigs or AlterConfigs"))
        #expect(help.contains("--dry-run"))
        #expect(help.contains("Config/topics.json"))
    }

    @Test("an invalid --spec is refused before contacting the cluster, naming the key")
    func invalidSpec() throws {
        let spec = try Repository.json("Config/topics.json").setting("topics.markers.partitions", .integer(7))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-spec-\(UUID().uuidString).json").path
        try Data(JSONWriter.encode(spec)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try CommandRun.provisioner(
            ["topics", "apply", "--config", Repository.path("Config/demo.json"), "--spec", path, "--dry-run"],
            environment: ["PROVISIONER_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:1"], timeout: .seconds(20))
        #expect(run.status == 1, "\(run)")
        #expect(run.errorLines.count == 1, "\(run)")
        #expect(run.standardError.contains("topics.markers.partitions: must equal topics.requests.partitions (24)"), "\(run)")
    }
}
