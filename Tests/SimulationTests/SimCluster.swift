import Kafka
import Recovery

/// One provisioning request of the workload: its id is its wallet handshake (single-use).
struct SimRequest {
    let id: String
    /// Apple's window: the answer is due by then.
    let deadlineMs: Int64
}

/// A record of a markers partition: an owner's fence or a call marker (the real `CallMarker`).
enum SimMarkerRecord {
    case fence(instance: String)
    case marker(CallMarker)
}

/// A reconciliation job on the (simulated) reconcile topic.
struct SimReconcileJob {
    let requestID: String
    let partition: Int32
    let requestOffset: Int64
    /// The hand-over position: the markers offset catch-up read from.
    let markersFrom: Int64
}

/// The simulated Kafka cluster: the requests and markers partitions (co-partitioned), the
/// group's committed offsets with their metadata, the results published, the reconcile jobs and
/// which markers partitions cannot be read for a while. The invariants about what reached the
/// cluster are checked here, as it happens.
final class SimCluster {
    static let requestsTopic = "provisioning.requests"
    let partitionCount: Int32
    var requests: [[SimRequest]]
    var markers: [[SimMarkerRecord]]
    /// The group's committed offset (and metadata) per requests partition.
    private(set) var committed: [Int32: TopicPartitionOffset] = [:]
    /// Final results published per request id, in order (the encoded result).
    private(set) var finals: [String: [(atMs: Int64, result: String)]] = [:]
    /// Markers partitions unreadable until then.
    var unreadableUntilMs: [Int32: Int64] = [:]
    /// Produce acknowledgements are delayed by this much extra until `slowUntilMs` (a broker hiccup).
    var slowUntilMs: Int64 = 0
    /// Broken promises found, with when.
    private(set) var violations: [String] = []

    init(partitionCount: Int32) {
        self.partitionCount = partitionCount
        requests = Array(repeating: [], count: Int(partitionCount))
        markers = Array(repeating: [], count: Int(partitionCount))
    }

    static func topicPartition(_ partition: Int32) -> TopicPartition {
        TopicPartition(topic: requestsTopic, partition: partition)
    }

    func violation(_ text: String, atMs: Int64) { violations.append("t=\(atMs) \(text)") }

    /// Appends to markers partition `partition`; returns its offset.
    func append(_ record: SimMarkerRecord, to partition: Int32) -> Int64 {
        markers[Int(partition)].append(record)
        return Int64(markers[Int(partition)].count - 1)
    }

    /// Whether markers partition `partition` can be read now.
    func readable(_ partition: Int32, nowMs: Int64) -> Bool { (unreadableUntilMs[partition] ?? 0) <= nowMs }

    /// A commit of `offset` by a group member: committed offsets never move backwards.
    func commit(_ offset: TopicPartitionOffset, by worker: String, nowMs: Int64) {
        if let previous = committed[offset.partition], offset.offset < previous.offset {
            violation("committed offset of partition \(offset.partition) moved backwards \(previous.offset) -> \(offset.offset) (by \(worker))",
                      atMs: nowMs)
        }
        committed[offset.partition] = offset
    }

    /// A final result reached the results topic.
    func publishFinal(_ result: String, for requestID: String, nowMs: Int64) {
        finals[requestID, default: []].append((nowMs, result))
        let distinct = Set(finals[requestID]!.map(\.result))
        if distinct.count > 1 {
            violation("request \(requestID) has two different finals: \(distinct.sorted())", atMs: nowMs)
        }
    }
}
