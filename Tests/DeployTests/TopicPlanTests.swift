import Contract
import Kafka
import Pipeline
import Testing

/// The plan `topics apply` computes from a cluster's state, checked without a cluster.
@Suite("topics apply: the plan", .timeLimit(.minutes(5)))
struct TopicPlanTests {
    private let layout = TopicLayout.production
    private let names = TopicNames()

    /// The cluster as the layout wants it: every topic, its partitions, its replication, its configs.
    private var matchingCluster: ([KafkaTopicMetadata], [String: [String: String]]) {
        var topics: [KafkaTopicMetadata] = []
        var configs: [String: [String: String]] = [:]
        for role in TopicRole.allCases {
            let desired = layout[role]!
            topics.append(KafkaTopicMetadata(name: role.name(in: names), partitions: desired.partitions, replicationFactor: desired.replicationFactor))
            // DescribeConfigs reports every entry, defaults included.
            configs[role.name(in: names)] = desired.configs.merging(["compression.type": "producer", "max.message.bytes": "1048588"]) { first, _ in first }
        }
        return (topics, configs)
    }

    @Test("an empty cluster: create every topic with its partitions, replication factor and configs")
    func createsEverything() throws {
        let plan = try TopicPlan.make(layout: layout, names: names, existing: [], configs: [:])
        #expect(plan.changes.count == TopicRole.allCases.count)
        for change in plan.changes {
            let desired = try #require(layout[change.role])
            #expect(change.action == .create)
            #expect(change.topic == change.role.name(in: names))
            #expect(change.desiredPartitions == desired.partitions && change.replicationFactor == desired.replicationFactor)
            #expect(Dictionary(uniqueKeysWithValues: change.configs.map { ($0.key, $0.desired) }) == desired.configs)
        }
    }

    @Test("a cluster that matches the layout: nothing to do (a second apply changes nothing)")
    func idempotent() throws {
        let (topics, configs) = matchingCluster
        let plan = try TopicPlan.make(layout: layout, names: names, existing: topics, configs: configs)
        #expect(plan.isEmpty, "\(plan.changes)")
        #expect(plan.unchangedTopics.count == TopicRole.allCases.count)
        #expect(plan.notes.isEmpty)
    }

    @Test("fewer partitions are raised, more are kept; markers follow requests; one differing config is updated alone")
    func raisesAndUpdates() throws {
        var (topics, configs) = matchingCluster
        topics = topics.map { topic in
            var topic = topic
            if topic.name == names.requests { topic.partitions = 30 }   // raised by hand beyond the layout
            if topic.name == names.results { topic.partitions = 6 }
            if topic.name == names.deadLetters { topic.partitions = 5 }
            return topic
        }
        configs[names.audit]?["retention.ms"] = "604800000"
        let plan = try TopicPlan.make(layout: layout, names: names, existing: topics, configs: configs)

        let raises = plan.changes.filter { $0.action == .raisePartitions }
        #expect(Set(raises.map(\.topic)) == [names.results, names.markers])
        #expect(raises.first { $0.topic == names.results }.map { ($0.currentPartitions, $0.desiredPartitions) } ?? (nil, 0) == (6, 12))
        #expect(raises.first { $0.topic == names.markers }?.desiredPartitions == 30, "markers keep the partition count of requests")
        #expect(plan.notes.contains { $0.contains(names.requests) && $0.contains("never lowered") })
        #expect(plan.notes.contains { $0.contains(names.deadLetters) && $0.contains("never lowered") })

        let updates = plan.changes.filter { $0.action == .updateConfigs }
        #expect(updates.map(\.topic) == [names.audit])
        #expect(updates.first?.configs == [TopicConfigChange(key: "retention.ms", current: "604800000", isCurrentKnown: true, desired: "7776000000")])
        #expect(!plan.changes.contains { $0.action == .create })
        #expect(plan.changes.map(\.action) == [.raisePartitions, .raisePartitions, .updateConfigs], "applied in order: create, raise, configs")
    }

    @Test("raising requests raises markers too, and says that card ids move to new partitions")
    func requestsAndMarkersTogether() throws {
        var (topics, configs) = matchingCluster
        topics = topics.map { topic in
            var topic = topic
            if topic.name == names.requests || topic.name == names.markers { topic.partitions = 6 }
            return topic
        }
        configs.removeValue(forKey: names.markers)
        let plan = try TopicPlan.make(layout: layout, names: names, existing: topics, configs: configs)
        let raised = plan.changes.filter { $0.action == .raisePartitions }
        #expect(raised.map(\.topic) == [names.requests, names.markers])
        #expect(raised.allSatisfy { $0.currentPartitions == 6 && $0.desiredPartitions == 24 })
        #expect(plan.notes.contains { $0.contains("card ids") })
        // The markers' configs were not described: every layout config is listed as unknown.
        let markerUpdate = try #require(plan.changes.first { $0.action == .updateConfigs && $0.topic == names.markers })
        #expect(markerUpdate.configs.count == layout[.markers]?.configs.count)
        #expect(markerUpdate.configs.allSatisfy { !$0.isCurrentKnown })
    }

    @Test("configs not readable (the mock cluster): every existing topic gets 'update configs' with unknown current values")
    func unreadableConfigs() throws {
        let (topics, _) = matchingCluster
        let plan = try TopicPlan.make(layout: layout, names: names, existing: topics, configs: nil)
        #expect(!plan.configsRead)
        #expect(plan.changes.count == TopicRole.allCases.count)
        #expect(plan.changes.allSatisfy { $0.action == .updateConfigs && $0.configs.allSatisfy { !$0.isCurrentKnown } })
    }

    @Test("a replication factor that differs is reported, not planned")
    func replicationFactorIsReported() throws {
        var (topics, configs) = matchingCluster
        topics = topics.map { topic in
            var topic = topic
            if topic.name == names.audit { topic.replicationFactor = 1 }
            return topic
        }
        let plan = try TopicPlan.make(layout: layout, names: names, existing: topics, configs: configs)
        #expect(plan.isEmpty)
        #expect(plan.notes.contains { $0.contains(names.audit) && $0.contains("replication factor 1") })
    }

    @Test("two roles naming one topic, or a layout with markers unlike requests, is refused")
    func refusesBadInput() throws {
        var clashing = names
        clashing.parked = clashing.deadLetters
        #expect(throws: ConfigurationError.self) {
            try TopicPlan.make(layout: layout, names: clashing, existing: [], configs: [:])
        }
        var uneven = layout
        uneven.topics[.markers]?.partitions = 12
        #expect(throws: ConfigurationError.self) {
            try TopicPlan.make(layout: uneven, names: names, existing: [], configs: [:])
        }
    }
}
