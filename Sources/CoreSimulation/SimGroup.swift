import Kafka

/// A simulated group coordinator for one consumer group on one topic, cooperative or eager:
///
/// - cooperative (incremental, sticky): a member that must give partitions up is told to revoke
///   them (it may defer the unassign while they drain); only once it has done so are they assigned
///   to their new owner. Members keep what they may keep throughout.
/// - eager: every member revokes everything; once all have, the new assignment (round robin) is
///   handed out.
///
/// A member that has not finished its revoke within the rebalance timeout, or whose process died
/// (after the session timeout), or that a fault declares dead, is evicted: its partitions go to
/// the others at once, while the member itself (unless dead) goes on as a zombie until it notices
/// (`SimConsumer.notice`), then rejoins. Commits are accepted only from a member for a partition
/// the coordinator counts as that member's.
final class SimGroup: @unchecked Sendable {
    let cluster: SimCluster
    let id: String
    let topic: String
    let partitions: Int32
    private var members: [String: Member] = [:]
    /// Member ids in join order (every loop over members goes in this order: replays are exact).
    private var order: [String] = []
    private var nextMember = 0
    private var rebalanceScheduled = false
    /// Rebalance rounds so far.
    private(set) var generation = 0

    private struct Member {
        let consumer: SimConsumer
        var owned: Set<Int32> = []
        var revoking: Set<Int32> = []
    }

    init(cluster: SimCluster, id: String, topic: String, partitions: Int32) {
        self.cluster = cluster
        self.id = id
        self.topic = topic
        self.partitions = partitions
    }

    private var world: SimWorld { cluster.world }

    /// The run is over: the members (which hold the group) are let go.
    func tearDown() {
        members.removeAll()
        order.removeAll()
    }

    // MARK: - Membership

    /// A consumer joins: its member id (a rebalance follows).
    func join(_ consumer: SimConsumer) -> String {
        nextMember += 1
        let member = "\(consumer.process.name)#\(nextMember)"
        members[member] = Member(consumer: consumer)
        order.append(member)
        world.note("\(id): \(member) joins")
        scheduleRebalance()
        return member
    }

    /// A member leaves cleanly (after revoking everything it had).
    func leave(_ member: String) {
        guard members.removeValue(forKey: member) != nil else { return }
        order.removeAll { $0 == member }
        world.note("\(id): \(member) leaves")
        scheduleRebalance()
    }

    /// The coordinator stops counting `member` (session timeout, rebalance timeout, a fault): its
    /// partitions are reassigned now; a live member learns it after `noticeAfterMs` (nil: it is dead).
    func evict(_ member: String, reason: String, noticeAfterMs: Int64?) {
        guard let evicted = members.removeValue(forKey: member) else { return }
        order.removeAll { $0 == member }
        world.note("\(id): \(member) evicted (\(reason)); it held \(evicted.owned.sorted())")
        if let delay = noticeAfterMs {
            let consumer = evicted.consumer
            world.after(delay, consumer.process, "member notices it was evicted") { consumer.notice(evictedAs: member) }
        }
        scheduleRebalance()
    }

    /// `member`'s process died: the coordinator notices after the session timeout.
    func died(_ member: String) {
        world.after(cluster.sessionTimeoutMs, nil, "session timeout") { [self] in evict(member, reason: "session timeout", noticeAfterMs: nil) }
    }

    /// `member` finished the revoke it was told to do (its unassign call).
    func revokeCompleted(_ member: String) {
        guard var entry = members[member] else { return }
        entry.owned.subtract(entry.revoking)
        entry.revoking = []
        members[member] = entry
        world.note("\(id): \(member) finished its revoke")
        scheduleRebalance()
    }

    /// Whether `member` may commit `partition` (a member of the group that the coordinator counts
    /// as holding it, a revoke still draining included).
    func accepts(_ member: String?, _ partition: Int32) -> Bool {
        guard let member, let entry = members[member] else { return false }
        return entry.owned.contains(partition)
    }

    /// Whether `member` is still in the group.
    func has(_ member: String?) -> Bool { member.map { members[$0] != nil } ?? false }

    /// Records were appended to `partition`: its owner's loop turns soon.
    func appended(_ partition: TopicPartition) {
        guard partition.topic == topic else { return }
        for member in order where members[member]?.owned.contains(partition.partition) == true {
            members[member]?.consumer.recordsArrived(partition.partition)
        }
    }

    // MARK: - Rebalancing

    private func scheduleRebalance() {
        guard !rebalanceScheduled else { return }
        rebalanceScheduled = true
        world.after(world.int(20...300), nil, "rebalance") { [self] in
            rebalanceScheduled = false
            rebalance()
        }
    }

    private func rebalance() {
        let live = order
        guard !live.isEmpty else { return }
        generation += 1
        if cluster.cooperative { cooperativeRound(live) } else { eagerRound(live) }
    }

    /// Who owns what now (a partition being revoked still counts as its holder's).
    private var ownedByAnyone: Set<Int32> {
        order.reduce(into: Set<Int32>()) { $0.formUnion(members[$1]?.owned ?? []) }
    }

    private func cooperativeRound(_ live: [String]) {
        let target = stickyTarget(live)
        for member in live {
            guard var entry = members[member], entry.revoking.isEmpty else { continue }
            let lose = entry.owned.subtracting(target[member] ?? [])
            guard !lose.isEmpty else { continue }
            entry.revoking = lose
            members[member] = entry
            world.note("\(id) gen \(generation): \(member) revokes \(lose.sorted())")
            entry.consumer.deliver(.revoke(lose.sorted()))
            watchRevoke(member, lose)
        }
        let taken = ownedByAnyone
        for member in live {
            let gain = (target[member] ?? []).subtracting(taken)
            guard !gain.isEmpty, var entry = members[member] else { continue }
            entry.owned.formUnion(gain)
            members[member] = entry
            world.note("\(id) gen \(generation): \(member) is assigned \(gain.sorted())")
            entry.consumer.deliver(.assign(gain.sorted(), generation: Int32(generation)))
        }
    }

    private func eagerRound(_ live: [String]) {
        var waiting = false
        for member in live {
            guard var entry = members[member], !entry.owned.isEmpty else { continue }
            waiting = true
            guard entry.revoking.isEmpty else { continue }
            entry.revoking = entry.owned
            members[member] = entry
            world.note("\(id) gen \(generation): \(member) revokes everything \(entry.owned.sorted())")
            entry.consumer.deliver(.revoke(entry.owned.sorted()))
            watchRevoke(member, entry.owned)
        }
        guard !waiting else { return }
        for (index, member) in live.enumerated() {
            let share = Set((0..<partitions).filter { Int($0) % live.count == index })
            guard !share.isEmpty, var entry = members[member] else { continue }
            entry.owned = share
            members[member] = entry
            world.note("\(id) gen \(generation): \(member) is assigned \(share.sorted())")
            entry.consumer.deliver(.assign(share.sorted(), generation: Int32(generation)))
        }
    }

    /// The balanced assignment that keeps every member's partitions where it can.
    private func stickyTarget(_ live: [String]) -> [String: Set<Int32>] {
        let count = Int(partitions)
        let base = count / live.count, extra = count % live.count
        var target: [String: Set<Int32>] = [:]
        var quota: [String: Int] = [:]
        for (index, member) in live.enumerated() { quota[member] = base + (index < extra ? 1 : 0) }
        var free = Set(0..<partitions)
        for member in live {
            let kept = (members[member]?.owned ?? []).sorted().prefix(quota[member] ?? 0)
            target[member] = Set(kept)
            free.subtract(kept)
        }
        var remaining = free.sorted()
        for member in live {
            while (target[member]?.count ?? 0) < (quota[member] ?? 0), !remaining.isEmpty {
                target[member, default: []].insert(remaining.removeFirst())
            }
        }
        return target
    }

    /// A member still revoking `partitions` when the rebalance timeout passes is evicted.
    private func watchRevoke(_ member: String, _ partitions: Set<Int32>) {
        world.after(cluster.rebalanceTimeoutMs, nil, "rebalance timeout") { [self] in
            guard let entry = members[member], !entry.revoking.isEmpty, entry.revoking == partitions else { return }
            evict(member, reason: "revoke not finished within the rebalance timeout", noticeAfterMs: world.int(100...3_000))
        }
    }
}
