import Kafka
import Synchronization

/// Markers found by catch-up when a partition was assigned: marker key → latest state, and the
/// markers offset the read started from. Consulted for every request of that partition before it
/// is admitted.
final class MarkerIndex: Sendable {
    private struct Entry {
        var states: [String: CallMarker.State]
        var readFrom: Int64
    }

    private let entries = Mutex<[TopicPartition: Entry]>([:])

    /// Installs what catch-up found for `partition` (the requests partition), read from markers
    /// offset `readFrom` (0: the partition's start).
    func install(_ partition: TopicPartition, states: [String: CallMarker.State], readFrom: Int64) {
        entries.withLock { $0[partition] = Entry(states: states, readFrom: readFrom) }
    }

    /// Forgets a partition.
    func remove(_ partitions: [TopicPartition]) {
        entries.withLock { entries in
            for partition in partitions { entries[partition] = nil }
        }
    }

    /// The marker state recorded for a marker key (`CallMarker.key`), if any.
    func state(of key: String, in partition: TopicPartition) -> CallMarker.State? {
        entries.withLock { $0[partition]?.states[key] }
    }

    /// The markers offset catch-up read `partition` from: every marker it found is at or after it.
    func readFrom(_ partition: TopicPartition) -> Int64? {
        entries.withLock { $0[partition]?.readFrom }
    }
}
