import Kafka
import Synchronization

/// Markers found by catch-up when a partition was assigned: request id → latest state. Consulted
/// for every request of that partition before it is admitted.
final class MarkerIndex: Sendable {
    private let entries = Mutex<[TopicPartition: [String: CallMarker.State]]>([:])

    /// Installs what catch-up found for `partition` (the requests partition).
    func install(_ partition: TopicPartition, states: [String: CallMarker.State]) {
        entries.withLock { $0[partition] = states }
    }

    /// Forgets a partition.
    func remove(_ partitions: [TopicPartition]) {
        entries.withLock { entries in
            for partition in partitions { entries[partition] = nil }
        }
    }

    /// The marker state recorded for a request, if any.
    func state(of requestID: String, in partition: TopicPartition) -> CallMarker.State? {
        entries.withLock { $0[partition]?[requestID] }
    }
}
