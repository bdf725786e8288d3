import Contract

/// The desired shape of every pipeline topic: partitions, replication factor and topic configs,
/// keyed by role. `Config/topics.json` holds the production layout; `production` is the same
/// layout built in (a test holds the two equal), used when `topics apply` is given no `--spec`.
public struct TopicLayout: Sendable, Hashable {
    /// The desired topic per role; a valid layout names every role.
    public var topics: [TopicRole: DesiredTopic]

    /// Creates a layout (see `validationIssues` for the rules it must meet).
    public init(topics: [TopicRole: DesiredTopic]) {
        self.topics = topics
    }

    /// The desired topic for `role` (a valid layout has one for every role).
    public subscript(role: TopicRole) -> DesiredTopic? { topics[role] }

    /// Reads a layout file: `{"topics": {"requests": {"partitions": 24, "replication_factor": 3,
    /// "configs": {"retention.ms": "86400000", ...}}, ...}}`. Unknown keys, missing roles, bad types
    /// and broken rules are errors naming their key path.
    public static func parse(json text: String) throws(ConfigurationError) -> TopicLayout {
        let document: JSONValue
        do {
            document = try JSONParser().parse(text)
        } catch {
            throw ConfigurationError([.init(.error, "(file)", "is not valid JSON: \(error)")])
        }
        var issues: [ConfigurationIssue] = []
        var root = ConfigurationReader(path: "", value: document, issues: &issues)
        var topicsReader = root.object("topics")
        var topics: [TopicRole: DesiredTopic] = [:]
        for role in TopicRole.allCases {
            guard topicsReader.members[role.rawValue] != nil else {
                topicsReader.issues.append(.init(.error, topicsReader.keyPath(role.rawValue), "is required (every pipeline topic needs an entry)"))
                continue
            }
            var entry = topicsReader.object(role.rawValue)
            let partitions = entry.int("partitions", default: 0, in: 1...10_000)
            let replicationFactor = entry.int("replication_factor", default: 0, in: 1...32)
            for key in ["partitions", "replication_factor"] where entry.members[key] == nil {
                entry.issues.append(.init(.error, entry.keyPath(key), "is required"))
            }
            var configsReader = entry.object("configs")
            var configs: [String: String] = [:]
            for key in configsReader.keys {
                guard let value = configsReader.raw(key) else { continue }
                switch value {
                case .string(let text): configs[key] = text
                case .number(let number): configs[key] = number.literal
                case .bool(let flag): configs[key] = flag ? "true" : "false"
                default:
                    configsReader.issues.append(.init(.error, configsReader.keyPath(key), "must be a string, number or Boolean (Kafka topic configs are passed through)"))
                }
            }
            entry.absorb(configsReader)
            topicsReader.absorb(entry)
            topics[role] = DesiredTopic(partitions: partitions, replicationFactor: replicationFactor, configs: configs)
        }
        root.absorb(topicsReader)
        issues += root.issues + root.unknownKeyIssues()
        let layout = TopicLayout(topics: topics)
        if !issues.contains(where: { $0.severity == .error }) { issues += layout.validationIssues }
        guard !issues.contains(where: { $0.severity == .error }) else {
            throw ConfigurationError(issues.sorted { $0.keyPath < $1.keyPath })
        }
        return layout
    }

    /// Rules a layout must meet, each broken one as an error with its key path: every role present;
    /// `markers` has exactly the partitions of `requests` (they are co-partitioned);
    /// `min.insync.replicas` at most the replication factor; `retention.ms` a whole number (-1 for
    /// forever); `cleanup.policy` one of `delete`, `compact`, `compact,delete`.
    public var validationIssues: [ConfigurationIssue] {
        var issues: [ConfigurationIssue] = []
        for role in TopicRole.allCases {
            let path = "topics.\(role.rawValue)"
            guard let topic = topics[role] else {
                issues.append(.init(.error, path, "is required (every pipeline topic needs an entry)"))
                continue
            }
            if topic.partitions < 1 { issues.append(.init(.error, "\(path).partitions", "must be at least 1")) }
            if topic.replicationFactor < 1 { issues.append(.init(.error, "\(path).replication_factor", "must be at least 1")) }
            if let text = topic.configs["min.insync.replicas"] {
                if let value = Int(text), value >= 1 {
                    if value > topic.replicationFactor {
                        issues.append(.init(.error, "\(path).configs.min.insync.replicas",
                                            "is \(value), above the replication factor \(topic.replicationFactor): producers with acks=all could never write"))
                    }
                } else {
                    issues.append(.init(.error, "\(path).configs.min.insync.replicas", "must be a whole number of at least 1, found '\(text)'"))
                }
            }
            if let text = topic.configs["retention.ms"], !(Int64(text).map { $0 >= -1 } ?? false) {
                issues.append(.init(.error, "\(path).configs.retention.ms", "must be whole milliseconds (-1: keep forever), found '\(text)'"))
            }
            if let text = topic.configs["cleanup.policy"] {
                let parts = Set(text.split(separator: ",").map { String($0.filter { $0 != " " }) })
                if parts.isEmpty || !parts.isSubset(of: ["delete", "compact"]) {
                    issues.append(.init(.error, "\(path).configs.cleanup.policy", "must be delete, compact or compact,delete; found '\(text)'"))
                }
            }
        }
        if let requests = topics[.requests], let markers = topics[.markers], requests.partitions != markers.partitions {
            issues.append(.init(.error, "topics.markers.partitions",
                                "must equal topics.requests.partitions (\(requests.partitions)), found \(markers.partitions): markers are co-partitioned with requests"))
        }
        return issues
    }
}
