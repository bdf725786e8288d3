import Contract
import Kafka

/// What `provisioner topics apply` would change on a cluster to give every pipeline topic its
/// layout: create missing topics, raise partition counts that are lower (never lower one), keep
/// `markers` at the partition count of `requests`, and set topic configs that differ.
///
/// Computed from the cluster's Metadata (topics, partitions, replication) and, when the cluster
/// answers DescribeConfigs, from the topics' current configs; when it does not (librdkafka's mock
/// cluster), every desired config of an existing topic is listed as to be set, marked unknown.
public struct TopicPlan: Sendable {
    /// The steps, in the order they are applied (creates, partition raises, config updates), each
    /// group in role order.
    public var changes: [TopicChange]
    /// Topics that already match the layout.
    public var unchangedTopics: [String]
    /// Things an operator should know: partitions kept above the layout, markers raised along
    /// with requests, keys moving to other partitions, replication factors that differ.
    public var notes: [String]
    /// Whether the cluster's topic configs were read (false: config steps are conservative).
    public var configsRead: Bool

    /// True when there is nothing to do.
    public var isEmpty: Bool { changes.isEmpty }

    /// Computes the plan for the topics `names` (the worker configuration's `topics`) from the
    /// cluster's `existing` topics and their `configs` (nil: not readable). Throws when the layout
    /// is invalid or two roles name the same topic.
    public static func make(layout: TopicLayout, names: TopicNames, existing: [KafkaTopicMetadata],
                            configs: [String: [String: String]]?) throws(ConfigurationError) -> TopicPlan {
        var issues = layout.validationIssues
        var roleByName: [String: TopicRole] = [:]
        for role in TopicRole.allCases {
            let name = role.name(in: names)
            if let other = roleByName[name] {
                issues.append(.init(.error, "topics.\(role.rawValue)",
                                    "names '\(name)', the topic of topics.\(other.rawValue) too; every role needs a topic of its own"))
            }
            roleByName[name] = role
        }
        guard issues.isEmpty else { throw ConfigurationError(issues) }

        let cluster = Dictionary(existing.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var targets: [TopicRole: Int] = [:]
        var notes: [String] = []
        for role in TopicRole.allCases {
            let wanted = layout.topics[role]?.partitions ?? 1
            let current = cluster[role.name(in: names)]?.partitions ?? 0
            targets[role] = max(wanted, current)
            if current > wanted {
                notes.append("\(role.name(in: names)) has \(current) partitions, more than the layout's \(wanted): kept (partitions are never lowered)")
            }
        }
        let coPartitioned = max(targets[.requests] ?? 1, targets[.markers] ?? 1)
        for role in [TopicRole.requests, .markers] where (targets[role] ?? 0) < coPartitioned {
            let other: TopicRole = role == .requests ? .markers : .requests
            notes.append("\(role.name(in: names)) goes to \(coPartitioned) partitions to match \(other.name(in: names)) (markers are co-partitioned with requests)")
            targets[role] = coPartitioned
        }
        if let requests = cluster[names.requests], requests.partitions < coPartitioned {
            notes.append("""
                raising \(names.requests) from \(requests.partitions) to \(coPartitioned) partitions sends some card ids to new \
                partitions: a card's requests already queued on its old partition may be handled alongside newer ones on the \
                new partition until the old backlog drains; raise partitions when traffic is low
                """)
        }

        var creates: [TopicChange] = []
        var raises: [TopicChange] = []
        var updates: [TopicChange] = []
        var unchanged: [String] = []
        for role in TopicRole.allCases {
            guard let desired = layout.topics[role], let target = targets[role] else { continue }
            let name = role.name(in: names)
            guard let topic = cluster[name] else {
                let entries = desired.configs.sorted { $0.key < $1.key }.map {
                    TopicConfigChange(key: $0.key, current: nil, isCurrentKnown: true, desired: $0.value)
                }
                creates.append(TopicChange(role: role, topic: name, action: .create, currentPartitions: nil, desiredPartitions: target,
                                           replicationFactor: desired.replicationFactor, configs: entries))
                continue
            }
            if topic.replicationFactor != desired.replicationFactor {
                notes.append("""
                    \(name) has replication factor \(topic.replicationFactor), the layout says \(desired.replicationFactor): not changed \
                    here (a replication change is a partition reassignment: kafka-reassign-partitions.sh or your operator)
                    """)
            }
            var isUnchanged = true
            if target > topic.partitions {
                isUnchanged = false
                raises.append(TopicChange(role: role, topic: name, action: .raisePartitions, currentPartitions: topic.partitions,
                                          desiredPartitions: target, replicationFactor: topic.replicationFactor, configs: []))
            }
            let current = configs?[name]
            let differing = desired.configs.sorted { $0.key < $1.key }.compactMap { key, value -> TopicConfigChange? in
                guard let current else { return TopicConfigChange(key: key, current: nil, isCurrentKnown: false, desired: value) }
                return current[key] == value ? nil : TopicConfigChange(key: key, current: current[key], isCurrentKnown: true, desired: value)
            }
            if !differing.isEmpty {
                isUnchanged = false
                updates.append(TopicChange(role: role, topic: name, action: .updateConfigs, currentPartitions: topic.partitions,
                                           desiredPartitions: target, replicationFactor: topic.replicationFactor, configs: differing))
            }
            if isUnchanged { unchanged.append(name) }
        }
        return TopicPlan(changes: creates + raises + updates, unchangedTopics: unchanged, notes: notes, configsRead: configs != nil)
    }
}
