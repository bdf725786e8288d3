import Contract
import Foundation
import Harness
import Kafka
import Pipeline
import Simulator
import TestSupport

/// Which Kafka a rig's workers, producer and collector use.
enum RigBroker: String, Sendable {
    /// librdkafka's mock cluster in the test process, three brokers (`EmbeddedStack`).
    case mockCluster = "mock_cluster"
    /// noida-db as a separate process, one node (`NoidaBroker`); the workers' `session.timeout.ms`
    /// is raised to its minimum, 6,000.
    case noida
    /// The operator's own cluster (`StagingCluster`, `scripts/staging-check`): prefixed topics and
    /// groups, its security settings, created and deleted by the rig.
    case staging

    /// Whether the broker hands a killed member's partitions to the others (noida-db never does).
    var reassignsKilledMembers: Bool {
        switch self {
        case .mockCluster: true
        case .noida: false
        case .staging: (try? StagingCluster.fromEnvironment())?.reassignsKilledMembers ?? true
        }
    }
}

/// What the multi-process scenarios (kill -9, scale while calling) stand on: a Kafka cluster with
/// the pipeline topics (librdkafka's mock cluster or a separate broker process: `RigBroker`), the
/// issuer simulator, a consumer group name, a folder for the workers' configuration files, a
/// result collector, a producer and a request factory. `stop` undoes it.
final class ProcessGroupRig: Sendable {
    let partitions: Int
    let broker: RigBroker
    let endpoints: StackEndpoints
    let simulator: IssuerSimulator
    /// The mock cluster, for leader moves and injected faults (nil on a broker process).
    let mockCluster: KafkaMockCluster?
    let group: String
    let directory: URL
    let collector: ResultCollector
    let producer: KafkaProducer
    let factory: RequestFactory
    private let stack: EmbeddedStack?
    private let brokerProcess: NoidaBroker?
    private let staging: StagingCluster?

    /// A rig named `name` (the group and the folder are made unique from it) on `broker` (the
    /// mock cluster with `brokers` brokers, a noida-db process, or the staging cluster).
    /// `noidaConsumerOverrides` are more librdkafka properties for the workers' consumers on noida-db
    /// and the staging cluster.
    init(name: String, partitions: Int, brokers: Int = 3, broker: RigBroker = .mockCluster,
         noidaConsumerOverrides: [String: String] = [:]) async throws {
        self.partitions = partitions
        self.broker = broker
        switch broker {
        case .mockCluster:
            let stack = try EmbeddedStack(brokers: brokers, partitions: partitions)
            self.stack = stack
            brokerProcess = nil
            mockCluster = stack.cluster
            simulator = stack.simulator
            endpoints = stack.endpoints
            staging = nil
        case .noida:
            let process = try await NoidaBroker.start()
            do {
                try process.createTopics(TopicNames().all, partitions: partitions)
                let simulator = try IssuerSimulator()
                stack = nil
                brokerProcess = process
                staging = nil
                mockCluster = nil
                self.simulator = simulator
                endpoints = StackEndpoints(bootstrapServers: process.bootstrapServers, simulatorURL: "http://127.0.0.1:\(simulator.port)",
                                           workerConsumerOverrides: ["session.timeout.ms": String(NoidaBroker.minimumSessionTimeoutMs)]
                                               .merging(noidaConsumerOverrides) { _, new in new })
            } catch {
                process.kill()
                throw error
            }
        case .staging:
            let cluster = try StagingCluster.fromEnvironment()
            // Topics made here get a random part; existing ones are named by the scenario alone.
            let run = cluster.managesTopics ? UniqueName.make(name) : name
            let topics = cluster.topics(run: run)
            try cluster.create(topics, partitions: partitions)
            let simulator = try IssuerSimulator()
            stack = nil
            brokerProcess = nil
            staging = cluster
            mockCluster = nil
            self.simulator = simulator
            // A real cluster refuses a session timeout below group.min.session.timeout.ms (6,000 by default).
            var endpoints = StackEndpoints(bootstrapServers: cluster.bootstrapServers, simulatorURL: "http://127.0.0.1:\(simulator.port)",
                                           workerConsumerOverrides: ["session.timeout.ms": "10000"].merging(noidaConsumerOverrides) { _, new in new })
            endpoints.topics = topics
            endpoints.clientProperties = cluster.properties
            self.endpoints = endpoints
        }
        group = (staging?.prefix ?? "") + UniqueName.make(name)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make(name))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        collector = try ResultCollector(properties: endpoints.consumerProperties, topics: endpoints.topics, partitions: partitions)
        producer = try KafkaProducer(configuration: endpoints.producerProperties)
        factory = try RequestFactory(devices: 4)
    }

    /// The pipeline topic names.
    var topics: TopicNames { endpoints.topics }

    /// Starts a `provisioner worker` process of the rig's group.
    func worker(_ name: String, environment: [String: String] = [:]) throws -> ChildWorker {
        try ChildWorker(endpoints: endpoints, groupID: group, name: name, directory: directory, environment: environment)
    }

    /// One answered request per partition, so every worker is past its first catch-up.
    func warmUp() throws {
        try EmbeddedStack.warmUp(partitions: partitions, topic: topics.requests, factory: factory, producer: producer,
                                 collector: collector, timeoutMs: 60_000)
    }

    /// A load of `total` requests at `perSecond` onto the requests topic.
    func load(perSecond: Double, total: Int, make: @escaping @Sendable (Int) throws -> GeneratedRequest) -> LoadGenerator {
        LoadGenerator(producer: producer, topic: topics.requests, partitions: partitions, perSecond: perSecond, total: total, make: make)
    }

    /// Stops the producer, the collector, the simulator and the cluster; removes the folder.
    func stop() {
        producer.close(timeoutMs: 5_000)
        collector.stop()
        if let stack {
            stack.stop()
        } else {
            simulator.stop()
        }
        brokerProcess?.kill()
        staging?.delete(topics)
        try? FileManager.default.removeItem(at: directory)
    }
}
