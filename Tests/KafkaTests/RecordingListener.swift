import Foundation
import Kafka
import Synchronization

/// A rebalance listener that records what it heard, what the consumer still had assigned at each
/// revoke, and which thread called it; optionally commits inside `partitionsRevoked`.
final class RecordingListener: KafkaRebalanceListener {
    /// One listener call.
    enum Event: Sendable, Hashable {
        case assigned(Set<TopicPartition>)
        case revoked(Set<TopicPartition>)
        case lost(Set<TopicPartition>)
    }

    private struct State {
        var events: [Event] = []
        var assignmentsAtRevoke: [Set<TopicPartition>] = []
        var threads: Set<String> = []
        var commitOutcomes: [KafkaError?] = []
    }

    private let state = Mutex(State())
    private let commitMetadataOnRevoke: String?

    /// `commitMetadataOnRevoke`: when set, commits offset 0 with this metadata for every revoked
    /// partition, synchronously, inside `partitionsRevoked`.
    init(commitMetadataOnRevoke: String? = nil) {
        self.commitMetadataOnRevoke = commitMetadataOnRevoke
    }

    var events: [Event] { state.withLock { $0.events } }
    var assignmentsAtRevoke: [Set<TopicPartition>] { state.withLock { $0.assignmentsAtRevoke } }
    var threads: Set<String> { state.withLock { $0.threads } }
    /// For each revoke (when committing on revoke): nil for a successful commit, else its error.
    var commitOutcomes: [KafkaError?] { state.withLock { $0.commitOutcomes } }

    func partitionsAssigned(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        let thread = ThreadNames.current
        state.withLock {
            $0.events.append(.assigned(Set(partitions)))
            $0.threads.insert(thread)
        }
    }

    func partitionsRevoked(_ partitions: [TopicPartition], by consumer: KafkaConsumer) -> KafkaRevokeCompletion {
        let stillAssigned = Set(consumer.assignment())
        var commitError: KafkaError?
        if let metadata = commitMetadataOnRevoke {
            do {
                try consumer.commit(partitions.map { TopicPartitionOffset($0, offset: 0, metadata: metadata) }, synchronously: true)
            } catch {
                commitError = error
            }
        }
        let thread = ThreadNames.current
        state.withLock {
            $0.events.append(.revoked(Set(partitions)))
            $0.assignmentsAtRevoke.append(stillAssigned)
            $0.threads.insert(thread)
            if commitMetadataOnRevoke != nil { $0.commitOutcomes.append(commitError) }
        }
        return .now
    }

    func partitionsLost(_ partitions: [TopicPartition], by consumer: KafkaConsumer) {
        let thread = ThreadNames.current
        state.withLock {
            $0.events.append(.lost(Set(partitions)))
            $0.threads.insert(thread)
        }
    }
}
