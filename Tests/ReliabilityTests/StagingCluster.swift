import Contract
import Foundation
import Kafka
import Pipeline
import TestSupport

/// The operator's own Kafka cluster that `scripts/staging-check` points the multi-worker scenarios
/// at, read from the environment: `PROVISIONER_STAGING_BOOTSTRAP` (required), the
/// librdkafka security settings in the JSON file `PROVISIONER_STAGING_PROPERTIES`
/// (`{"security.protocol": "SASL_SSL", "sasl.mechanisms": "SCRAM-SHA-512", …}`),
/// `PROVISIONER_STAGING_TOPIC_PREFIX` (every topic and consumer group the scenarios make starts
/// with it, so nothing of the cluster's own is touched), `PROVISIONER_STAGING_REPLICATION` (the
/// topics' replication factor, default the broker's), `PROVISIONER_STAGING_CREATE_TOPICS=0` (the
/// prefixed topics exist already: neither created nor deleted) and
/// `PROVISIONER_STAGING_REASSIGNS=0` (a broker that never hands a killed member's partitions on,
/// such as noida-db).
struct StagingCluster: Sendable {
    let bootstrapServers: String
    let properties: [String: String]
    let prefix: String
    let replicationFactor: Int
    let managesTopics: Bool
    let reassignsKilledMembers: Bool

    /// Whether the environment names a staging cluster (the staging suite runs only then).
    static var isConfigured: Bool { !(ProcessInfo.processInfo.environment["PROVISIONER_STAGING_BOOTSTRAP"] ?? "").isEmpty }

    /// The cluster the environment names.
    static func fromEnvironment() throws -> StagingCluster {
        let environment = ProcessInfo.processInfo.environment
        guard let bootstrap = environment["PROVISIONER_STAGING_BOOTSTRAP"], !bootstrap.isEmpty else {
            throw TestSupportError("PROVISIONER_STAGING_BOOTSTRAP is not set")
        }
        var properties: [String: String] = [:]
        if let path = environment["PROVISIONER_STAGING_PROPERTIES"], !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path),
                  let members = (try? JSONParser().parse(Array(data)))?.objectValue else {
                throw TestSupportError("PROVISIONER_STAGING_PROPERTIES: \(path) is not a readable JSON object of librdkafka properties")
            }
            for (key, value) in members {
                guard let text = value.stringValue else { throw TestSupportError("PROVISIONER_STAGING_PROPERTIES: \(key) must be a string") }
                properties[key] = text
            }
        }
        let prefix = environment["PROVISIONER_STAGING_TOPIC_PREFIX"].flatMap { $0.isEmpty ? nil : $0 } ?? "provisioner-staging."
        return StagingCluster(bootstrapServers: bootstrap, properties: properties, prefix: prefix,
                              replicationFactor: Int(environment["PROVISIONER_STAGING_REPLICATION"] ?? "") ?? -1,
                              managesTopics: environment["PROVISIONER_STAGING_CREATE_TOPICS"] != "0",
                              reassignsKilledMembers: environment["PROVISIONER_STAGING_REASSIGNS"] != "0")
    }

    /// The pipeline topics of one scenario: the default names after the prefix and `run`.
    func topics(run: String) -> TopicNames {
        let base = TopicNames()
        var topics = TopicNames()
        topics.requests = prefix + run + "." + base.requests
        topics.results = prefix + run + "." + base.results
        topics.audit = prefix + run + "." + base.audit
        topics.reconcile = prefix + run + "." + base.reconcile
        topics.deadLetters = prefix + run + "." + base.deadLetters
        topics.parked = prefix + run + "." + base.parked
        topics.markers = prefix + run + "." + base.markers
        return topics
    }

    /// Admin client properties.
    var adminProperties: [String: String] { properties.merging(["bootstrap.servers": bootstrapServers]) { _, own in own } }

    /// Creates `topics` with `partitions` each (when the cluster's topics are managed here).
    func create(_ topics: TopicNames, partitions: Int) throws {
        guard managesTopics else { return }
        let admin = try KafkaAdmin(configuration: adminProperties)
        defer { admin.close() }
        let outcomes = try admin.createTopics(topics.all.map { KafkaTopicSpecification(name: $0, partitions: partitions, replicationFactor: replicationFactor) },
                                              timeoutMs: 30_000)
        for name in topics.all {
            if let failure = outcomes[name] ?? nil { throw TestSupportError("the staging cluster refused to create \(name): \(failure)") }
        }
    }

    /// Deletes `topics` (when created here); problems are printed, never thrown (clean-up).
    func delete(_ topics: TopicNames) {
        guard managesTopics else { return }
        do {
            let admin = try KafkaAdmin(configuration: adminProperties)
            defer { admin.close() }
            let outcomes = try admin.deleteTopics(topics.all, timeoutMs: 30_000)
            for (name, failure) in outcomes.sorted(by: { $0.key < $1.key }) {
                if let failure { print("staging clean-up: \(name) not deleted: \(failure)") }
            }
        } catch {
            print("staging clean-up: the topics \(topics.all.joined(separator: ", ")) were not deleted: \(error)")
        }
    }
}
