import Contract
import Kafka

/// A new owner's claim on a markers partition, written when it is assigned the partition and
/// before its marker catch-up reads the partition (so the catch-up sees every marker written
/// before the fence). The record's offset is the owner's *epoch*: every later `started` marker it
/// writes carries that epoch and its instance (`CallMarker.fence`, `CallMarker.instance`), and an
/// owner that finds a fence of another instance between its epoch and its `started` marker knows
/// a newer owner holds the partition (it is a zombie) and does not call the issuer.
///
/// The record has no Kafka key (it names no request); a worker of an earlier version reads it as
/// an undecodable marker that cannot be attributed to a request (counted and logged, otherwise
/// ignored).
public struct MarkerFence: Sendable, Hashable {
    /// The worker that wrote it.
    public var worker: String
    /// When it was written (epoch ms).
    public var atMs: Int64
    /// The writing process (random per worker start): fences of one process never fence out its
    /// own earlier assignments (its duplicate filter orders those), only other processes'.
    public var instance: String
    /// The consumer group generation in which the writer was assigned the partition (nil when
    /// unknown, or written by an earlier version). A fence that lands late, after its writer gave
    /// the partition up and a newer owner fenced it, carries an older generation than that owner's:
    /// it fences nobody out (`FenceLog`).
    public var generation: Int32?
    /// The consumer group the writer was assigned the partition in (nil: written by an earlier
    /// version). Generations count per group: another group's fence (a renamed `group_id`, a
    /// second deployment on the same markers topic) says nothing of this group's generations.
    public var group: String?

    /// Creates a fence record.
    public init(worker: String, atMs: Int64, instance: String, generation: Int32? = nil, group: String? = nil) {
        self.worker = worker
        self.atMs = atMs
        self.instance = instance
        self.generation = generation
        self.group = group
    }

    /// What the fencing rule compares of this fence.
    public var stamp: FenceStamp { FenceStamp(generation: generation, group: group, atMs: atMs) }

    /// Whether fence `fence` of another process, lying between an owner's own fence and its
    /// marker, fences that owner (`owner`: its own fence's stamp) out: the rule every owner applies
    /// before it calls and every reader applies to another's markers.
    ///
    /// - Within one group (or when either group is unknown), a fence of a newer or the same group
    ///   generation does; one of an older generation landed late, after its writer gave the
    ///   partition up, and does not.
    /// - Across two groups (a renamed `group_id`, a second deployment on the same markers topic),
    ///   generations say nothing: a fence written (`atMs`, its writer's clock) more than
    ///   `crossGroupMarginMs` before the owner's landed late, after its writer gave the partition
    ///   up, and does not; any other does (within the margin, the later in the log wins, as
    ///   before). Both owners judge the same two recorded times, so two that each read the
    ///   other's fence never both go on, whatever their clocks.
    /// - When a number it needs is unknown, it does (the safe side: the owner gives its request up).
    public static func supersedes(_ fence: FenceStamp, owner: FenceStamp) -> Bool {
        if let group = fence.group, let ownerGroup = owner.group, group != ownerGroup {
            guard let at = fence.atMs, let ownerAt = owner.atMs else { return true }
            return at + crossGroupMarginMs >= ownerAt
        }
        guard let generation = fence.generation, let ownerGeneration = owner.generation else { return true }
        return generation >= ownerGeneration
    }

    /// How much earlier than an owner's fence another group's must have been written to count as
    /// older. Within it, clock error could reverse the two (the later in the log wins instead);
    /// beyond it, the time decides: a wider margin would leave more renames waiting on a late
    /// fence whose writer exited. Clocks of two hosts that differ by more can only make the wrong
    /// owner wait (`supersedes`), never both call.
    public static let crossGroupMarginMs: Int64 = 1_000

    /// Whether fence `fence` of another process shows that process holds the partition after an
    /// owner with stamp `owner` (wherever it lies): exactly when `owner`'s fence would not fence
    /// that process out (`supersedes` in the other direction), and never when a number is unknown.
    /// An owner that finds one before its catch-up ends never runs the assignment: its own fence
    /// landed after the newer one.
    public static func isNewer(_ fence: FenceStamp, than owner: FenceStamp) -> Bool {
        if let group = fence.group, let ownerGroup = owner.group, group != ownerGroup {
            guard let at = fence.atMs, let ownerAt = owner.atMs else { return false }
            return at > ownerAt + crossGroupMarginMs
        }
        guard let generation = fence.generation, let ownerGeneration = owner.generation else { return false }
        return generation > ownerGeneration
    }

    /// The fence as a Kafka record for markers partition `partition`.
    public func message(topic: String, partition: Int32) -> KafkaOutgoingMessage {
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.key("state"); writer.string("fence")
        writer.key("at"); writer.integer(atMs)
        writer.key("worker"); writer.string(worker)
        writer.key("instance"); writer.string(instance)
        if let generation { writer.key("generation"); writer.integer(Int64(generation)) }
        if let group { writer.key("group"); writer.string(group) }
        writer.endObject()
        return KafkaOutgoingMessage(topic: topic, key: nil, value: writer.bytes, headers: [], partition: partition)
    }

    /// Reads a fence record; nil for anything else (a call marker included).
    public static func decode(_ bytes: [UInt8]) -> MarkerFence? {
        guard let document = try? JSONParser(maxDepth: 4, maxBytes: 4096).parse(bytes),
              document["state"]?.stringValue == "fence", document["request_id"] == nil,
              let at = document["at"]?.int64Value, RecordBounds.isTimestamp(at)
        else { return nil }
        let worker = document["worker"]?.stringValue ?? ""
        guard RecordBounds.isText(worker, maxBytes: 256), let instance = document["instance"]?.stringValue,
              RecordBounds.isText(instance, maxBytes: 64) else { return nil }
        let generation = document["generation"]?.int64Value
        if document["generation"] != nil, !(generation.map { $0 >= 0 && $0 <= Int64(Int32.max) } ?? false) { return nil }
        let group = document["group"]?.stringValue
        if document["group"] != nil, !(group.map { RecordBounds.isText($0, maxBytes: 256) } ?? false) { return nil }
        return MarkerFence(worker: worker, atMs: at, instance: instance, generation: generation.map { Int32($0) }, group: group)
    }
}

/// What the fencing rule compares of an owner's fence (`MarkerFence.supersedes`): the group
/// generation and group it was assigned the partition in, and when it wrote its fence. A marker
/// carries its writer's (`CallMarker.stamp`), so readers judge it by the same rule.
public struct FenceStamp: Sendable, Hashable {
    /// The group generation (nil: unknown, or written by an earlier version).
    public var generation: Int32?
    /// The consumer group (nil: written by an earlier version).
    public var group: String?
    /// When the fence was written, by its writer's clock (nil: written by an earlier version).
    public var atMs: Int64?

    /// A stamp with these parts.
    public init(generation: Int32? = nil, group: String? = nil, atMs: Int64? = nil) {
        self.generation = generation
        self.group = group
        self.atMs = atMs
    }
}
