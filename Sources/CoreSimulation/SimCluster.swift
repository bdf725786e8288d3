import Contract
import Kafka
import Recovery

/// The simulated Kafka cluster: one log per topic partition (records become readable when
/// appended), committed offsets per group with their metadata, the groups' coordinators, and the
/// faults that touch the brokers (slow acknowledgements, a markers partition that cannot be read).
/// Commits are checked as they are accepted: a group's committed offset never moves backwards.
final class SimCluster: @unchecked Sendable {
    let world: SimWorld
    /// Partition counts by topic.
    let partitions: [String: Int32]
    private var logs: [TopicPartition: [KafkaMessage]] = [:]
    private var commits: [String: [TopicPartition: TopicPartitionOffset]] = [:]
    private var groups: [String: SimGroup] = [:]
    /// When a record last went to a topic that carries a request's progress (requests, markers,
    /// results, reconciliation jobs, dead letters): the run ends after a long enough silence.
    private(set) var lastProgressMs: Int64 = 0
    /// Request ids with a final result or a dead letter, as they are appended.
    private(set) var answered = Set<String>()
    /// Broken promises seen while running (a commit backwards).
    private(set) var violations: [String] = []
    /// Until when produce acknowledgements are slow (a broker hiccup).
    var slowUntilMs: Int64 = 0
    /// The shortest and the longest a slow acknowledgement takes.
    var slowFastestMs: Int64 = 200, slowestMs: Int64 = 3_000
    /// Whether a write a process sent before it died lands (nil: drawn, even odds).
    var deadWritesLand: Bool?
    /// Topics every produce to fails, until when (a partition leader gone): each send is reported
    /// failed after a produce timeout, written or not.
    var produceOutageUntilMs: [String: Int64] = [:]
    /// Whether a send in an outage lands (reported timed out all the same), and after how long its
    /// failure is reported (nil: drawn, even odds and 0.5-5 s).
    var outageWritesLand: Bool?, outageReportMs: Int64?
    /// Markers partitions that cannot be read, until when.
    var unreadableUntilMs: [Int32: Int64] = [:]
    /// Process name → until when it cannot read the markers topic (cut off from its leaders, as a
    /// member evicted for a network fault is): reads of every other process go on.
    var cutOffUntilMs: [String: Int64] = [:]
    /// The rebalance protocol of every group.
    let cooperative: Bool
    /// How long a group waits for a member to rejoin (its revoke done) before evicting it.
    let rebalanceTimeoutMs: Int64
    /// How long a dead member holds its partitions before the coordinator notices.
    let sessionTimeoutMs: Int64
    /// Every partition's first offset (its low watermark): the records before it were deleted by
    /// retention before the run began.
    let firstOffset: Int64

    init(world: SimWorld, partitions: [String: Int32], cooperative: Bool, rebalanceTimeoutMs: Int64, sessionTimeoutMs: Int64,
         firstOffset: Int64 = 0) {
        self.world = world
        self.firstOffset = firstOffset
        self.partitions = partitions
        self.cooperative = cooperative
        self.rebalanceTimeoutMs = rebalanceTimeoutMs
        self.sessionTimeoutMs = sessionTimeoutMs
    }

    /// Every produce to `topic` fails for `forMs`, each reported after `reportedAfterMs`: written
    /// all the same when `landing` (a timeout), else not written (a scenario's outage; the seed's
    /// outages draw both).
    func failWrites(to topic: String, forMs: Int64, landing: Bool, reportedAfterMs: Int64) {
        produceOutageUntilMs[topic] = world.nowMs + forMs
        outageWritesLand = landing
        outageReportMs = reportedAfterMs
    }

    /// Forgets the groups and logs (the run is over and checked): the groups hold the members.
    func tearDown() {
        for group in groups.values { group.tearDown() }
        groups.removeAll()
        logs.removeAll()
    }

    /// Records a broken promise.
    func violation(_ text: String) {
        violations.append("t=\(world.nowMs - SimulationRun.epochMs): \(text)")
        world.note("VIOLATION \(text)")
    }

    // MARK: - Logs

    /// The partition a record goes to: its own, else its key's hash (FNV-1a), else 0.
    func partition(for message: KafkaOutgoingMessage) -> Int32 {
        if let partition = message.partition { return partition }
        let count = UInt64(partitions[message.topic] ?? 1)
        guard let key = message.key else { return 0 }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int32(hash % count)
    }

    /// Appends a record now; its offset.
    @discardableResult
    func append(_ message: KafkaOutgoingMessage, partition: Int32) -> Int64 {
        let topicPartition = TopicPartition(topic: message.topic, partition: partition)
        let offset = firstOffset + Int64(logs[topicPartition]?.count ?? 0)
        let record = KafkaMessage(topic: message.topic, partition: partition, offset: offset, key: message.key, value: message.value ?? [],
                                  headers: message.headers, timestampMs: message.timestampMs ?? world.nowMs)
        logs[topicPartition, default: []].append(record)
        if message.topic != SimulationRun.topics.audit { lastProgressMs = world.nowMs }
        if message.topic == SimulationRun.topics.results, let result = try? ProvisioningResult.decode(record.value), result.isFinal {
            answered.insert(result.requestID)
        } else if message.topic == SimulationRun.topics.deadLetters,
                  let requestID = (try? JSONParser().parse(record.value))?["request_id"]?.stringValue {
            // A request's dead letter holds the request itself (its key is the card id).
            answered.insert(requestID)
        }
        if world.isTracing { world.note("append \(message.topic)[\(partition)]@\(offset): \(Self.describe(record))") }
        groups.values.forEach { $0.appended(topicPartition) }
        return offset
    }

    /// What a record says, for the trace.
    static func describe(_ record: KafkaMessage) -> String {
        let topics = SimulationRun.topics
        switch record.topic {
        case topics.results:
            guard let result = try? ProvisioningResult.decode(record.value) else { return "undecodable result" }
            return "result \(result.requestID) \(SimulationPromises.describe(result))\(result.isFinal ? "" : " (not final)")"
        case topics.markers:
            if let marker = CallMarker.decode(record.value, headers: record.headers) {
                return "marker \(marker.requestID) \(marker.state)\(marker.outcome.map { " \($0)" } ?? "")\(marker.isDecision ? " DECISION" : "") by \(marker.worker) for offset \(marker.requestOffset)"
            }
            return MarkerFence.decode(record.value).map { "fence by \($0.instance)" } ?? "undecodable marker"
        case topics.audit:
            let event = try? JSONParser().parse(record.value)
            return "audit \(event?["request_id"]?.stringValue ?? "-") \(event?["stage"]?.stringValue ?? "?") \(event?["status"]?.stringValue ?? "") \(event?["reason"]?.stringValue ?? "")"
        case topics.reconcile:
            guard case .success(let job) = ReconcileJob.read(record.value) else { return "undecodable job" }
            return "reconcile job \(job.requestID) attempt \(job.attempt)\(job.handOver == nil ? "" : " hand-over") due +\(job.dueAtMs - SimulationRun.epochMs)"
        case topics.requests:
            let request = try? JSONParser().parse(record.value)
            return "request \(request?["request_id"]?.stringValue ?? "?")"
        default:
            return "\(record.value.count) bytes"
        }
    }

    /// The log of a partition (its records from `firstOffset` on).
    func log(_ partition: TopicPartition) -> [KafkaMessage] { logs[partition] ?? [] }

    /// The record at `offset`, nil outside the retained log.
    func record(_ partition: TopicPartition, at offset: Int64) -> KafkaMessage? {
        let index = offset - firstOffset
        guard let log = logs[partition], index >= 0, index < Int64(log.count) else { return nil }
        return log[Int(index)]
    }

    /// A partition's low and high watermarks: its first retained offset and the next offset to be written.
    func watermarks(_ partition: TopicPartition) -> (low: Int64, high: Int64) {
        (firstOffset, firstOffset + Int64(logs[partition]?.count ?? 0))
    }

    /// Every record of `topic`, partition by partition.
    func records(_ topic: String) -> [KafkaMessage] {
        (0..<(partitions[topic] ?? 0)).flatMap { log(TopicPartition(topic: topic, partition: $0)) }
    }

    /// Whether a markers partition can be read now by `process` (nil: by anybody).
    func isReadable(_ partition: TopicPartition, by process: String? = nil) -> Bool {
        guard partition.topic == SimulationRun.topics.markers else { return true }
        let cutOff = process.map { (cutOffUntilMs[$0] ?? 0) > world.nowMs } ?? false
        return !cutOff && (unreadableUntilMs[partition.partition] ?? 0) <= world.nowMs
    }

    // MARK: - Groups and commits

    /// The coordinator of `group` (made on first use).
    func group(_ id: String, topic: String) -> SimGroup {
        if let group = groups[id] { return group }
        let group = SimGroup(cluster: self, id: id, topic: topic, partitions: partitions[topic] ?? 1)
        groups[id] = group
        return group
    }

    /// The committed offset (with metadata) of `partition` in `group`.
    func committed(_ group: String, _ partition: TopicPartition) -> TopicPartitionOffset? {
        commits[group]?[partition]
    }

    /// Stores a commit the coordinator accepted; a commit below the last one is a violation.
    func store(_ group: String, _ offset: TopicPartitionOffset, by member: String) {
        let partition = TopicPartition(topic: offset.topic, partition: offset.partition)
        if let last = commits[group]?[partition], offset.offset < last.offset {
            violation("group \(group) committed \(partition.partition)@\(offset.offset) below \(last.offset) (by \(member))")
        }
        commits[group, default: [:]][partition] = offset
        world.note("commit \(group) \(partition.partition)@\(offset.offset) \(offset.metadata ?? "") by \(member)")
    }
}
