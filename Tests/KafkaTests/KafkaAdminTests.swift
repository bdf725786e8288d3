import Kafka
import Testing
import TestSupport

@Suite("Admin client against the mock cluster", .timeLimit(.minutes(5)))
struct KafkaAdminTests {
    @Test("listTopics reports the topics, partition counts and replication factors from metadata")
    func listTopics() throws {
        let cluster = try TestCluster()
        let narrow = try cluster.makeTopic("narrow", partitions: 1)
        let wide = try cluster.makeTopic("wide", partitions: 8)
        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": cluster.bootstrapServers])
        defer { admin.close() }
        let topics = try admin.listTopics(timeoutMs: 5_000)
        #expect(topics.first { $0.name == narrow } == KafkaTopicMetadata(name: narrow, partitions: 1, replicationFactor: 3))
        #expect(topics.first { $0.name == wide } == KafkaTopicMetadata(name: wide, partitions: 8, replicationFactor: 3))
        #expect(topics.map(\.name) == topics.map(\.name).sorted())
    }

    @Test("the mock does not answer CreateTopics, DescribeConfigs or AlterConfigs: each times out with a clear error")
    func unsupportedRequestsTimeOut() throws {
        let cluster = try TestCluster()
        let existing = try cluster.makeTopic(partitions: 1)
        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": cluster.bootstrapServers])
        defer { admin.close() }
        let wanted = UniqueName.make("created")

        let started = ContinuousClock.now
        let create = #expect(throws: KafkaError.self) {
            _ = try admin.createTopics([KafkaTopicSpecification(name: wanted, partitions: 3, replicationFactor: 1,
                                                               configs: ["retention.ms": "60000"])], timeoutMs: 300)
        }
        #expect(create?.code == .timedOut)
        #expect(create?.message.contains("KafkaMockCluster.createTopic") == true)
        #expect(ContinuousClock.now - started < .seconds(20), "the call honours its timeout")
        #expect(try !admin.listTopics(timeoutMs: 5_000).contains { $0.name == wanted }, "nothing was created behind our back")

        let describe = #expect(throws: KafkaError.self) { _ = try admin.describeTopicConfigs([existing], timeoutMs: 300) }
        #expect(describe?.code == .timedOut)
        let alter = #expect(throws: KafkaError.self) {
            try admin.alterTopicConfigs([existing: ["retention.ms": "1000"]], timeoutMs: 300)
        }
        #expect(alter?.code == .timedOut)
    }

    @Test("invalid topic specifications are rejected before anything is sent")
    func invalidSpecification() throws {
        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": "127.0.0.1:1"])
        defer { admin.close() }
        let error = #expect(throws: KafkaError.self) {
            _ = try admin.createTopics([KafkaTopicSpecification(name: "bad", partitions: 0, replicationFactor: 1)], timeoutMs: 100)
        }
        #expect(error?.code == .invalidArgument)
        #expect(try admin.createTopics([], timeoutMs: 100).isEmpty)
        admin.close()
        #expect(throws: KafkaError.self) { _ = try admin.listTopics(timeoutMs: 100) }
    }
}
