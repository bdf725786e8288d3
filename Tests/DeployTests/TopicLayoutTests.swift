import Contract
import Pipeline
import TestSupport
import Testing

/// `Config/topics.json`: the production topic layout, equal to the built-in one.
@Suite("Config/topics.json: the topic layout", .timeLimit(.minutes(5)))
struct TopicLayoutTests {
    private static let day: Int64 = 86_400_000

    @Test("Config/topics.json parses and equals the built-in layout that 'topics apply' uses without --spec")
    func fileEqualsBuiltIn() throws {
        let layout = try TopicLayout.parse(json: try Repository.text("Config/topics.json"))
        #expect(layout == TopicLayout.production)
        #expect(Set(layout.topics.keys) == Set(TopicRole.allCases))
    }

    @Test("every topic: replication factor 3, min.insync.replicas 2, delete policy; markers co-partitioned with requests")
    func durability() throws {
        let layout = TopicLayout.production
        #expect(layout.validationIssues.isEmpty, "\(layout.validationIssues)")
        for role in TopicRole.allCases {
            let topic = try #require(layout[role])
            #expect(topic.replicationFactor == 3, "\(role)")
            #expect(topic.configs["min.insync.replicas"] == "2", "\(role)")
            #expect(topic.configs["cleanup.policy"] == "delete", "\(role)")
        }
        #expect(layout[.markers]?.partitions == layout[.requests]?.partitions)
        #expect((layout[.requests]?.partitions ?? 0) >= 12, "room for a dozen or more workers")
    }

    @Test("retention: results and reconcile short, markers two days (the duplicate horizon and a margin); audit 90 days; dead letters and parked two weeks")
    func retention() throws {
        func retention(_ role: TopicRole) -> Int64? { TopicLayout.production[role]?.configs["retention.ms"].flatMap { Int64($0) } }
        #expect(retention(.results) == Self.day)
        #expect(retention(.markers) == 2 * Self.day)
        #expect((retention(.reconcile) ?? .max) <= 3 * Self.day)
        #expect(retention(.audit) == 90 * Self.day)
        #expect(retention(.dlq) == 14 * Self.day)
        #expect(retention(.dlqParked) == 14 * Self.day)
        #expect((retention(.requests) ?? .max) <= 7 * Self.day)
    }

    @Test("a layout breaking a rule is refused, naming the key", arguments: [
        ("topics.markers.partitions", "markers.partitions", JSONValue.integer(12)),
        ("topics.audit.configs.min.insync.replicas", "audit.configs.min.insync.replicas", JSONValue.string("4")),
        ("topics.dlq.replication_factor", "dlq.replication_factor", JSONValue.integer(0)),
        ("topics.results.colour", "results.colour", JSONValue.string("blue")),
        ("topics.reconcile.configs.retention.ms", "reconcile.configs.retention.ms", JSONValue.string("a week")),
    ])
    func refusesBrokenLayout(keyPath: String, edit: String, value: JSONValue) throws {
        var document = try Repository.json("Config/topics.json")
        // Config keys hold dots, so edit the configs map directly rather than through a dotted path.
        let parts = edit.split(separator: ".", maxSplits: 2).map(String.init)
        if parts.count == 3 && parts[1] == "configs" {
            var configs = document.at("topics.\(parts[0]).configs")?.objectValue ?? [:]
            configs[parts[2]] = value
            document = document.setting("topics.\(parts[0]).configs", .object(configs))
        } else {
            document = document.setting("topics.\(edit)", value)
        }
        #expect {
            try TopicLayout.parse(json: JSONWriter.encode(document).string)
        } throws: { error in
            (error as? ConfigurationError)?.issues.contains { $0.keyPath == keyPath } ?? false
        }
    }

    @Test("a layout missing a role is refused, naming it")
    func refusesMissingRole() throws {
        let document = try Repository.json("Config/topics.json").setting("topics.dlq_parked", nil)
        #expect {
            try TopicLayout.parse(json: JSONWriter.encode(document).string)
        } throws: { error in
            (error as? ConfigurationError)?.issues.contains { $0.keyPath == "topics.dlq_parked" } ?? false
        }
    }
}
