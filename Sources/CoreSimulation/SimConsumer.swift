import Kafka
import Pipeline

/// A simulated group member (`GroupConsumer`) over the `SimCluster`: rebalances from its
/// `SimGroup` reach the loop's relay inside `poll`, as librdkafka's callbacks do; a revoke the
/// loop defers keeps its partitions (and the group waiting) until `completeRevoke`. Records of
/// assigned partitions are returned from their fetch position; now and then a partition paused
/// still returns a record or two that were fetched before the pause (what the catch-up gate is
/// for), never after a seek (librdkafka drops records fetched before a seek).
/// A commit is accepted or refused by the coordinator a few milliseconds after it is sent; a
/// synchronous one may get no answer within its bound (`commitTimeoutRate`, drawn per seed), the
/// coordinator having stored it or not.
/// A seek may fail (`seekFaultRate`): refused with an error, or accepted and never carried out,
/// as librdkafka's asynchronous seek (`timeout_ms` 0) reports nothing when it fails later.
final class SimConsumer: GroupConsumer, @unchecked Sendable {
    enum Op {
        /// Partitions assigned in a group generation.
        case assign([Int32], generation: Int32)
        case revoke([Int32])
    }

    let cluster: SimCluster
    let process: SimProcess
    let executor: SimExecutor
    let relay: RebalanceRelay
    let committedHandler: @Sendable (Result<[TopicPartitionOffset], KafkaError>) -> Void
    let groupID: String
    let seekFaultRate: Double
    let commitTimeoutRate: Double
    private var topic = ""
    private var group: SimGroup?
    private(set) var member: String?
    private var assigned: [Int32: Fetch] = [:]

    /// A partition's fetch state.
    private struct Fetch {
        var position: Int64
        var paused = false
        /// Records fetched before the pause, still returned by the next poll.
        var prefetched = 0
    }
    private var ops: [Op] = []
    private var commitResults: [Result<[TopicPartitionOffset], KafkaError>] = []
    private var lostNoticed: [String] = []
    private var deferred: [Int32]?
    private var isClosed = false
    /// The group generation of the last assignment this member took.
    private(set) var groupGeneration: Int32?

    init(cluster: SimCluster, process: SimProcess, executor: SimExecutor, groupID: String, seekFaultRate: Double = 0,
         commitTimeoutRate: Double = 0, relay: RebalanceRelay,
         committed: @escaping @Sendable (Result<[TopicPartitionOffset], KafkaError>) -> Void) {
        self.cluster = cluster
        self.seekFaultRate = seekFaultRate
        self.commitTimeoutRate = commitTimeoutRate
        self.process = process
        self.executor = executor
        self.groupID = groupID
        self.relay = relay
        committedHandler = committed
    }

    private var world: SimWorld { cluster.world }

    private func partition(_ number: Int32) -> TopicPartition { TopicPartition(topic: topic, partition: number) }

    // MARK: - From the coordinator

    /// A rebalance for this member: served by the next poll.
    func deliver(_ op: Op) {
        ops.append(op)
        executor.wakeLoops()
    }

    /// Records arrived in `partition`: the loop turns soon if it fetches it.
    func recordsArrived(_ partition: Int32) {
        guard let state = assigned[partition], !state.paused else { return }
        executor.wakeLoops()
    }

    /// The member learns the coordinator evicted it: its partitions are lost; it rejoins.
    func notice(evictedAs evicted: String) {
        guard !isClosed, member == evicted else { return }
        lostNoticed.append(evicted)
        executor.wakeLoops()
    }

    /// A fault: the coordinator evicts this live member now (a missed heartbeat, say); it learns
    /// so after `noticeAfterMs` and goes on meanwhile (a zombie).
    func evictFromGroup(noticeAfterMs: Int64) {
        guard let member, !isClosed else { return }
        group?.evict(member, reason: "evicted (simulated fault)", noticeAfterMs: noticeAfterMs)
    }

    /// Its process died: the coordinator evicts it at the session timeout.
    func died() {
        guard let member, !isClosed else { return }
        group?.died(member)
    }

    // MARK: - GroupConsumer

    func subscribe(_ topics: [String]) throws(KafkaError) {
        topic = topics.first ?? ""
        let group = cluster.group(groupID, topic: topic)
        self.group = group
        member = group.join(self)
    }

    func poll(maxMessages: Int, timeoutMs: Int32) -> [Result<KafkaMessage, KafkaError>] {
        guard !isClosed else { return [.failure(KafkaError(code: .destroyed, message: "the consumer is closed"))] }
        if !lostNoticed.isEmpty {
            lostNoticed.removeAll()
            let lost = assigned.keys.sorted()
            assigned = [:]
            deferred = nil
            ops.removeAll()
            groupGeneration = nil
            world.note("\(member ?? "?") lost \(lost)")
            if !lost.isEmpty { relay.lost(lost.map(partition)) }
            member = group?.join(self)
        }
        while !ops.isEmpty {
            switch ops.removeFirst() {
            case .assign(let partitions, let generation):
                groupGeneration = generation
                for number in partitions {
                    // Nothing committed, or committed below the retained log: from the low watermark
                    // (`auto.offset.reset` earliest).
                    let committed = cluster.committed(groupID, partition(number))?.offset ?? cluster.firstOffset
                    assigned[number] = Fetch(position: max(cluster.firstOffset, committed))
                }
                relay.assigned(partitions.map(partition))
            case .revoke(let partitions):
                if relay.revoked(partitions.map(partition)) == .deferred {
                    deferred = partitions
                } else {
                    unassign(partitions)
                }
            }
        }
        var results: [Result<KafkaMessage, KafkaError>] = []
        let commits = commitResults
        commitResults.removeAll()
        for outcome in commits { committedHandler(outcome) }
        var room = max(1, maxMessages)
        for number in assigned.keys.sorted() {
            guard room > 0, var state = assigned[number] else { break }
            // A paused partition returns only what was fetched before the pause.
            let limit = state.paused ? min(room, state.prefetched) : room
            state.prefetched = 0
            guard limit > 0 else { continue }
            // A position below the retained log (a seek there) resets to the low watermark.
            state.position = max(state.position, cluster.firstOffset)
            var taken = 0
            while taken < limit, let record = cluster.record(partition(number), at: state.position) {
                results.append(.success(record))
                state.position += 1
                taken += 1
            }
            room -= taken
            assigned[number] = state
        }
        return results
    }

    func pause(_ partitions: [TopicPartition]) {
        for partition in partitions where assigned[partition.partition] != nil {
            if assigned[partition.partition]?.paused == false, world.chance(0.05) { assigned[partition.partition]?.prefetched = Int(world.int(1...2)) }
            assigned[partition.partition]?.paused = true
        }
    }

    func resume(_ partitions: [TopicPartition]) {
        for partition in partitions where assigned[partition.partition] != nil { assigned[partition.partition]?.paused = false }
        executor.wakeLoops()
    }

    func seek(_ partition: TopicPartition, to offset: Int64, timeoutMs: Int32) throws(KafkaError) {
        guard assigned[partition.partition] != nil else { throw KafkaError(code: .state, message: "seek of a partition not assigned") }
        if seekFaultRate > 0, world.chance(seekFaultRate) {
            world.note("\(process.name): seek of \(partition.partition) to \(offset) fails")
            if world.chance(0.5) { throw KafkaError(code: .state, message: "seek failed (simulated)") }
            return
        }
        assigned[partition.partition]?.position = offset
        assigned[partition.partition]?.prefetched = 0
    }

    func refetch(_ partition: TopicPartition, from offset: Int64) throws(KafkaError) -> Bool {
        guard assigned[partition.partition] != nil else { throw KafkaError(code: .state, message: "refetch of a partition not assigned") }
        // An assignment at an explicit offset, not a seek: it does not fail as seeks may here.
        assigned[partition.partition]?.paused = false
        assigned[partition.partition]?.position = offset
        assigned[partition.partition]?.prefetched = 0
        executor.wakeLoops()
        return true
    }

    func commit(_ offsets: [TopicPartitionOffset], timeoutMs: Int32) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        // No draw unless a run asks for commit timeouts: the schedules of the seeds stay as they were.
        if commitTimeoutRate > 0, world.chance(commitTimeoutRate) {
            // The answer did not come within the bound; the coordinator got the commit or not (one
            // that got there was stored before any later commit of this member, as on one connection).
            if world.chance(0.5) { _ = store(offsets) }
            throw KafkaError(code: .timedOut, message: "the coordinator did not answer a commit within \(timeoutMs) ms (simulated)")
        }
        guard world.chance(0.97) else { throw KafkaError(code: .requestTimedOut, message: "commit timed out (simulated)") }
        guard store(offsets) else { throw KafkaError(code: .illegalGeneration, message: "commit refused: not a member holding the partition") }
    }

    func commitAsynchronously(_ offsets: [TopicPartitionOffset]) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        world.after(world.int(2...40), process, "commit answered") { [self] in
            let accepted = world.chance(0.97) && store(offsets)
            commitResults.append(accepted ? .success(offsets)
                                          : .failure(KafkaError(code: .illegalGeneration, message: "commit refused (simulated)")))
            executor.wakeLoops()
        }
    }

    /// Stores `offsets` if the coordinator accepts every one.
    private func store(_ offsets: [TopicPartitionOffset]) -> Bool {
        guard let group, offsets.allSatisfy({ group.accepts(member, $0.partition) }) else { return false }
        for offset in offsets { cluster.store(groupID, offset, by: member ?? "?") }
        return true
    }

    func committed(_ partitions: [TopicPartition], timeoutMs: Int32) throws(KafkaError) -> [TopicPartitionOffset] {
        guard world.chance(0.97) else { throw KafkaError(code: .timedOut, message: "committed offsets timed out (simulated)") }
        // As librdkafka: a partition the group never committed comes back with the invalid offset.
        return partitions.map { cluster.committed(groupID, $0) ?? TopicPartitionOffset(topic: $0.topic, partition: $0.partition, offset: TopicPartitionOffset.invalid) }
    }

    func watermarks(_ partition: TopicPartition, timeoutMs: Int32) throws(KafkaError) -> (low: Int64, high: Int64) {
        cluster.watermarks(partition)
    }

    func partitionCount(topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        Int(cluster.partitions[topic] ?? 0)
    }

    func completeRevoke() {
        guard let partitions = deferred else { return }
        deferred = nil
        unassign(partitions)
    }

    private func unassign(_ partitions: [Int32]) {
        for number in partitions { assigned[number] = nil }
        group?.revokeCompleted(member ?? "")
    }

    func close() {
        guard !isClosed else { return }
        if let partitions = deferred {
            deferred = nil
            unassign(partitions)
        }
        let remaining = assigned.keys.sorted()
        if !remaining.isEmpty {
            _ = relay.revoked(remaining.map(partition))
            unassign(remaining)
        }
        isClosed = true
        if let member { group?.leave(member) }
    }
}
