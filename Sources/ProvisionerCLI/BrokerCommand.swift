import Contract
import Dispatch
import Foundation
import Kafka
import Pipeline
#if canImport(Glibc)
import Glibc
#endif

/// `provisioner broker`: runs an embedded Kafka cluster on loopback with the pipeline topics.
enum BrokerCommand: Command {
    static let name = "broker"
    static let summary = "runs an embedded Kafka cluster on loopback with the pipeline topics"
    static let help = """
        usage: provisioner broker [--brokers N] [--partitions N] [--topics NAME:N,...] [--bootstrap-file F] [--exit-with-parent]

        Runs an embedded Kafka cluster (librdkafka's mock cluster) on loopback TCP and creates the
        pipeline topics: \(TopicNames().all.joined(separator: ", ")).
        The first line on stdout is 'bootstrap.servers=HOST:PORT,...'. Runs until SIGINT or SIGTERM,
        then exits 0. Any Kafka client can connect (kcat, confluent-kafka, the worker).

        options:
          --brokers N          number of brokers, 1 to 16 (default 3)
          --partitions N       partitions of every pipeline topic, 1 to 256 (default 6)
          --topics NAME:N,...  also create these topics with N partitions each (reply topics, say)
          --bootstrap-file F   also write the bootstrap servers (HOST:PORT,..., one line) to file F
          --exit-with-parent   also stop (exit 0) when the process that started it ends, so a
                               crashed test run or script leaves no broker behind

        For tests, demos and benchmarks only: data lives in memory (about 5 MB per partition, older
        data is dropped), topics are auto-created on use, and admin requests (CreateTopics,
        DescribeConfigs, AlterConfigs) are not answered.
        """

    static let switchNames: Set<String> = ["exit-with-parent"]

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        let exitWithParent = arguments.flag("exit-with-parent")
        let brokers = try arguments.integer("brokers", default: 3, in: 1...16)
        let partitions = try arguments.integer("partitions", default: 6, in: 1...256)
        let bootstrapFile = arguments.option("bootstrap-file")
        var extra: [(String, Int)] = []
        for item in (arguments.option("topics") ?? "").split(separator: ",") {
            let parts = item.split(separator: ":")
            guard parts.count == 2, RecordBounds.isTopicName(parts[0]), let count = Int(parts[1]), (1...256).contains(count) else {
                throw UsageError("--topics takes NAME:PARTITIONS pairs separated by commas (1 to 256 partitions)")
            }
            extra.append((String(parts[0]), count))
        }
        try arguments.rejectUnknown()
        if let unexpected = arguments.popPositional() {
            throw UsageError("unexpected argument '\(unexpected)'")
        }
        if let bootstrapFile, bootstrapFile.isEmpty {
            throw UsageError("--bootstrap-file needs a file name")
        }

        // Catch SIGINT/SIGTERM from the start (the default action would kill us).
        let stop = StopSignal(exitWithParent: exitWithParent)

        let cluster: KafkaMockCluster
        do {
            cluster = try KafkaMockCluster(brokers: brokers)
            for topic in TopicNames().all {
                try cluster.createTopic(topic, partitions: partitions, replicationFactor: min(brokers, 3))
            }
            for (topic, count) in extra {
                try cluster.createTopic(topic, partitions: count, replicationFactor: min(brokers, 3))
            }
        } catch {
            throw CommandFailure("could not start the embedded cluster: \(error.message)")
        }
        let servers = cluster.bootstrapServers

        if let bootstrapFile {
            do {
                try Data((servers + "\n").utf8).write(to: URL(fileURLWithPath: bootstrapFile), options: .atomic)
            } catch {
                cluster.close()
                throw CommandFailure("could not write --bootstrap-file \(bootstrapFile): \(error.localizedDescription)")
            }
        }
        // Unbuffered, so a parent reading a pipe sees it at once.
        writeStandardOutput("bootstrap.servers=\(servers)\n")
        printError("provisioner broker: \(brokers) broker(s) on \(servers); \(TopicNames().all.count) topics with \(partitions) partition(s); stop with Ctrl-C or SIGTERM")

        stop.wait()
        stop.cancel()
        cluster.close()
        printError("provisioner broker: stopped")
        return 0
    }
}
