import Kafka

/// A revoke that drains before its partitions are given up: the listener deferred it
/// (`KafkaRevokeCompletion.deferred`), the group's rebalance waits for the unassign call, and the
/// poll thread goes on serving the partitions it keeps. Its partitions are given up together (one
/// unassign call per revoke) once none of them has unsettled work or the deadline passed. One at a
/// time: librdkafka starts no other rebalance before the call. A value, like `WorkScheduler`: time
/// and the unsettled count are passed in.
struct RevokeDrain: Sendable, Equatable {
    /// The partitions draining (empty when none).
    private(set) var partitions: [TopicPartition] = []
    /// When they are given up whatever remains.
    private(set) var deadlineMs: Int64 = 0

    /// Whether a revoke is draining.
    var isDraining: Bool { !partitions.isEmpty }

    /// A revoke of `partitions` begins, to end by `deadlineMs` (added to one already draining, which
    /// librdkafka does not do, so nothing is ever dropped).
    mutating func begin(_ partitions: [TopicPartition], deadlineMs: Int64) {
        self.deadlineMs = isDraining ? min(self.deadlineMs, deadlineMs) : deadlineMs
        self.partitions += partitions.filter { !self.partitions.contains($0) }
    }

    /// Partitions that stopped draining some other way (lost): no longer waited for.
    mutating func forget(_ gone: [TopicPartition]) {
        partitions.removeAll { gone.contains($0) }
    }

    /// The partitions to give up now (and the drain ends): every draining one, once `unsettled`
    /// says none of them holds work or `nowMs` reached the deadline; nil while it must wait.
    mutating func due(nowMs: Int64, unsettled: ([TopicPartition]) -> Int) -> [TopicPartition]? {
        guard isDraining, nowMs >= deadlineMs || unsettled(partitions) == 0 else { return nil }
        defer { partitions = [] }
        return partitions
    }

    /// Every draining partition, now (the loop ends): the drain is over.
    mutating func takeAll() -> [TopicPartition] {
        defer { partitions = [] }
        return partitions
    }
}
