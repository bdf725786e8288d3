import Kafka
import Pipeline

/// A simulated producer (`RecordProducer`) of one process: a record is appended a few
/// milliseconds after `send` (slower during a broker hiccup), in send order per partition, and its
/// acknowledgement follows, in append order per partition (as librdkafka reports deliveries of one
/// partition in order). With the run's fault rate a send fails: not written, or written but
/// reported as timed out (the publisher's retry then writes it again: a duplicate in the log, as
/// with a real produce timeout, reported seconds later). During a produce outage of its topic every
/// send fails, reported after a produce timeout. When the process dies, what it had in flight lands or not.
final class SimProducer: RecordProducer, @unchecked Sendable {
    let cluster: SimCluster
    let process: SimProcess
    let faultRate: Double
    private(set) var outstandingCount = 0
    private var lastAppendMs: [TopicPartition: Int64] = [:]
    private var lastReportMs: [TopicPartition: Int64] = [:]

    init(cluster: SimCluster, process: SimProcess, faultRate: Double) {
        self.cluster = cluster
        self.process = process
        self.faultRate = faultRate
    }

    private var world: SimWorld { cluster.world }

    func send(_ message: KafkaOutgoingMessage,
              onDelivery: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void) throws(KafkaError) {
        let partition = cluster.partition(for: message)
        let topicPartition = TopicPartition(topic: message.topic, partition: partition)
        let slow = cluster.slowUntilMs > world.nowMs ? world.int(cluster.slowFastestMs...cluster.slowestMs) : 0
        let appendAt = max(world.nowMs + world.int(1...8) + slow, lastAppendMs[topicPartition] ?? 0)
        lastAppendMs[topicPartition] = appendAt
        let outage = (cluster.produceOutageUntilMs[message.topic] ?? 0) > world.nowMs
        let outageFault: Fault? = outage ? cluster.outageWritesLand.map { $0 ? .writtenButTimedOut : .notWritten } : nil
        let fault = outageFault ?? (outage || world.chance(faultRate) ? world.pick([Fault.notWritten, .writtenButTimedOut]) : nil)
        // A timeout (and every failure in an outage) is reported only once the produce timed out, as
        // librdkafka does; a refusal such as "not leader" comes back at once.
        let reportDelay = outage ? cluster.outageReportMs ?? world.int(500...5_000)
            : fault == .writtenButTimedOut ? world.int(500...5_000) : world.int(0...4)
        let landsIfDead = cluster.deadWritesLand ?? world.chance(0.5)
        outstandingCount += 1
        var stamped = message
        stamped.timestampMs = message.timestampMs ?? world.nowMs
        let record = stamped
        let process = self.process
        // The append belongs to the cluster: it happens (or not, by the draw) even if the process died.
        world.at(appendAt, nil, "append") { [self] in
            var offset: Int64?
            if fault != .notWritten && (process.isAlive || landsIfDead) { offset = cluster.append(record, partition: partition) }
            let reportAt = max(world.nowMs + reportDelay, lastReportMs[topicPartition] ?? 0)
            lastReportMs[topicPartition] = reportAt
            world.at(reportAt, process, "delivery report") { [self] in
                outstandingCount -= 1
                if let offset, fault == nil {
                    onDelivery(.success(KafkaDeliveryReport(topic: record.topic, partition: partition, offset: offset)))
                } else {
                    onDelivery(.failure(KafkaError(code: fault == .notWritten ? .notLeaderForPartition : .messageTimedOut,
                                                   message: "simulated produce failure")))
                }
            }
        }
    }

    private enum Fault { case notWritten, writtenButTimedOut }

    func partitionCount(topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        Int(cluster.partitions[topic] ?? 0)
    }

    func partitionCounts(timeoutMs: Int32) throws(KafkaError) -> [String: Int?] {
        cluster.partitions.mapValues { Int($0) }
    }

    func flush(timeoutMs: Int32) -> Bool { outstandingCount == 0 }

    func close(timeoutMs: Int32) {}
}
