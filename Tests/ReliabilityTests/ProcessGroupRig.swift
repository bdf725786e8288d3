import Foundation
import Harness
import Kafka
import TestSupport

/// What the multi-process scenarios (kill -9, scale while calling) stand on: an embedded stack of
/// three brokers with the simulator, a consumer group name, a folder for the workers'
/// configuration files, a result collector, a producer and a request factory. `stop` undoes it.
final class ProcessGroupRig: Sendable {
    let partitions: Int
    let stack: EmbeddedStack
    let group: String
    let directory: URL
    let collector: ResultCollector
    let producer: KafkaProducer
    let factory: RequestFactory

    /// A rig named `name` (the group and the folder are made unique from it) on `brokers` brokers.
    init(name: String, partitions: Int, brokers: Int = 3) throws {
        self.partitions = partitions
        stack = try EmbeddedStack(brokers: brokers, partitions: partitions)
        group = UniqueName.make(name)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make(name))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
        producer = try KafkaProducer(configuration: stack.producerProperties)
        factory = try RequestFactory(devices: 4)
    }

    /// Starts a `provisioner worker` process of the rig's group, with `environment` added to the stack's.
    func worker(_ name: String, environment: [String: String] = [:]) throws -> ChildWorker {
        try ChildWorker(stack: stack, groupID: group, name: name, directory: directory, environment: environment)
    }

    /// One answered request per partition, so every worker is past its first catch-up.
    func warmUp() throws {
        try EmbeddedStack.warmUp(partitions: partitions, topic: stack.topics.requests, factory: factory, producer: producer,
                                 collector: collector, timeoutMs: 60_000)
    }

    /// A load of `total` requests at `perSecond` onto the requests topic.
    func load(perSecond: Double, total: Int, make: @escaping @Sendable (Int) throws -> GeneratedRequest) -> LoadGenerator {
        LoadGenerator(producer: producer, topic: stack.topics.requests, partitions: partitions, perSecond: perSecond, total: total, make: make)
    }

    /// Stops the producer, the collector and the stack; removes the folder.
    func stop() {
        producer.close(timeoutMs: 5_000)
        collector.stop()
        stack.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
