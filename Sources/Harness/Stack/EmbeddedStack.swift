import Contract
import Foundation
import Kafka
import Observability
import Pipeline
import Simulator
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Everything in one process: a mock Kafka cluster with the pipeline topics, the issuer simulator,
/// and any number of workers in one consumer group. Used by `provisioner demo`, the benchmarks
/// and the end-to-end tests.
public final class EmbeddedStack: Sendable {
    /// The Kafka cluster.
    public let cluster: KafkaMockCluster
    /// The issuer simulator.
    public let simulator: IssuerSimulator
    /// Where the cluster and the simulator listen, and what workers and clients need to reach them.
    public let endpoints: StackEndpoints
    /// Partitions of every pipeline topic.
    public let partitions: Int
    private let workers = Mutex<[Worker]>([])

    /// Starts the cluster (`brokers`, `partitions` per topic) and the simulator (with `profile`).
    public init(brokers: Int = 1, partitions: Int = 6, profile: SimulatorProfile = SimulatorProfile()) throws {
        cluster = try KafkaMockCluster(brokers: brokers)
        for topic in TopicNames().all {
            try cluster.createTopic(topic, partitions: partitions, replicationFactor: min(brokers, 3))
        }
        self.partitions = partitions
        simulator = try IssuerSimulator(profile: profile)
        endpoints = StackEndpoints(bootstrapServers: cluster.bootstrapServers, simulatorURL: "http://127.0.0.1:\(simulator.port)")
    }

    /// `host:port,...` of the cluster.
    public var bootstrapServers: String { endpoints.bootstrapServers }
    /// Pipeline topic names.
    public var topics: TopicNames { endpoints.topics }
    /// A random key for `card_ref` / `device_ref` pseudonyms.
    public var auditKey: String { endpoints.auditKey }
    /// The simulator's base URL.
    public var simulatorURL: String { endpoints.simulatorURL }

    /// librdkafka properties for test and demo consumers (`StackEndpoints.consumerProperties`).
    public var consumerProperties: [String: String] { endpoints.consumerProperties }
    /// librdkafka properties for test and demo producers (`StackEndpoints.producerProperties`).
    public var producerProperties: [String: String] { endpoints.producerProperties }
    /// The environment a worker of this stack sees (`StackEndpoints.environment`).
    public var environment: [String: String] { endpoints.environment }

    /// The demo configuration pointed at this stack; `adjust` may change anything.
    public func configuration(groupID: String = "provisioner-demo", workerID: String = "worker-1",
                              adjust: (inout WorkerConfiguration) -> Void = { _ in }) throws -> WorkerConfiguration {
        var environment = self.environment
        environment["PROVISIONER_GROUP_ID"] = groupID
        environment["PROVISIONER_HTTP__LISTEN"] = "127.0.0.1:0"
        var (configuration, _) = try WorkerConfiguration.load(json: DemoConfiguration.json, environment: environment,
                                                              workerID: workerID, strict: true)
        adjust(&configuration)
        return configuration
    }

    /// The demo configuration as a file-ready JSON document with this stack's addresses
    /// (`StackEndpoints.configurationFileText(groupID:)`).
    public func configurationFileText(groupID: String) -> String { endpoints.configurationFileText(groupID: groupID) }

    /// Starts a worker with `configuration` (see `configuration(groupID:workerID:adjust:)`);
    /// `extraEnvironment` adds to the stack's environment (a replay key, say); `clock` lets a test
    /// move the worker's time on.
    @discardableResult
    public func startWorker(_ configuration: WorkerConfiguration, extraEnvironment: [String: String] = [:], logger: Logger,
                            metrics: MetricsRegistry = MetricsRegistry(),
                            clock: @escaping @Sendable () -> Int64 = { Timestamps.nowMs() }) throws -> Worker {
        let worker = try Worker(configuration: configuration, environment: environment.merging(extraEnvironment) { $1 }, logger: logger,
                                metrics: metrics, clock: clock)
        try worker.start()
        workers.withLock { $0.append(worker) }
        return worker
    }

    /// Waits until the running workers together own every requests partition and each owns at
    /// least one (the group has formed); false on timeout.
    public func waitForGroup(timeoutMs: Int64 = 30_000) -> Bool {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            let running = workers.withLock { $0 }
            let counts = running.map(\.assignedPartitionCount)
            if !running.isEmpty && counts.reduce(0, +) == partitions && counts.allSatisfy({ $0 > 0 || running.count > partitions }) {
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// Sends one Legacy Google Pay request to every partition and waits for their results, so the
    /// measured load does not pay for first fetches (offset resets) and connection set-up.
    public static func warmUp(partitions: Int, topic: String, factory: RequestFactory, producer: KafkaProducer,
                              collector: ResultCollector, timeoutMs: Int64 = 30_000) throws {
        var ids: [String] = []
        for partition in 0..<partitions {
            let request = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_warmup_\(partition)_\(factory.requestID())",
                                                requestID: factory.requestID("warmup"))
            try producer.send(KafkaOutgoingMessage(topic: topic, key: request.key, value: request.value, partition: Int32(partition))) { _ in }
            ids.append(request.requestID)
        }
        guard collector.wait(timeoutMs: timeoutMs, until: { snapshot in ids.allSatisfy { snapshot.final($0) != nil } }) else {
            throw DemoError(message: "warm-up requests were not answered within \(timeoutMs / 1000) s")
        }
    }

    /// Gracefully stops one worker (drain, commit, leave) and forgets it.
    public func stopWorker(_ worker: Worker) {
        worker.shutdown()
        worker.waitUntilStopped()
        workers.withLock { $0.removeAll { $0 === worker } }
    }

    /// Stops every worker, the simulator and the cluster.
    public func stop() {
        let running = workers.withLock { workers in
            defer { workers.removeAll() }
            return workers
        }
        for worker in running { worker.shutdown() }
        for worker in running { worker.waitUntilStopped() }
        simulator.stop()
        cluster.close()
    }
}
