import Contract
import Kafka

/// A write-ahead record of an issuer call, co-partitioned with its request in the markers topic:
/// `started` is acknowledged before the issuer is called; `completed` after the request's outputs
/// are acknowledged. A new owner of the partition that finds `started` without `completed` knows
/// the issuer may have been called and reconciles instead of calling again. A `completed` marker
/// also says how the request was finished (`outcome`).
///
/// A `completed` marker that carries `result` is a **decision**: the final result of a request
/// whose call may have happened, written *before* that result is published. The markers
/// partition is the one log every owner and reconciler of the request reads in the same order,
/// so the first decision for a marker key after its `started` marker is the request's final
/// answer; whoever publishes a final for it publishes that one (docs/ARCHITECTURE.md, "A final is
/// decided once").
///
/// A marker speaks for one request identity (`program`, `request_id`; CONTRACT section 12): its
/// `key` (`Key`) is that identity and, for a replay, the dead letter replayed. Markers written by
/// versions before the program was recorded have none (`program` nil): they speak for the
/// `request_id` under every program (`Key.speaks(for:)`), the safe side during a rolling
/// upgrade — a call that may have started under any program is reconciled, never made again —
/// except a decision, which names its program in the result it carries and is attributed to it.
///
/// The record is keyed by `request_id`, so a marker whose value cannot be read still names its
/// request: catch-up treats that request id, under every program, as "the call may have started"
/// (see `MarkerCatchUp`).
public struct CallMarker: Sendable, Hashable {
    /// Where the call stands.
    public enum State: String, Sendable { case started, completed }

    /// The request the call was for.
    public var requestID: String
    /// The program of that request; nil for markers written before the field existed (read as
    /// speaking for the request id under every program).
    public var program: String?
    /// Where the call stands.
    public var state: State
    /// The offset of the request in its partition.
    public var requestOffset: Int64
    /// When the marker was written (epoch ms).
    public var atMs: Int64
    /// The worker that wrote it.
    public var worker: String
    /// For `completed`: how the request was finished; nil for `started` (and for markers written
    /// before the field existed, which count as `answered`).
    public var outcome: Outcome?
    /// The dead letter this attempt replays (`x-replay-of`); nil for the original request. A
    /// replay's markers are its own: the original's `completed` does not finish it, and its
    /// `started` survives a crash like the original's.
    public var replayOf: String?
    /// For `started`: the writer's epoch, the offset of the `MarkerFence` it wrote when it took the
    /// partition (nil for markers of earlier versions, which count as written by an unfenced owner).
    public var fence: Int64?
    /// For `started` with a `fence`: the writing process (`MarkerFence.instance`).
    public var instance: String?
    /// For a marker with a `fence`: the consumer group generation in which its writer was assigned
    /// the partition (`MarkerFence.generation`; nil when unknown or written by an earlier version).
    public var generation: Int32?
    /// For a marker with a `fence`: the consumer group its writer was assigned the partition in
    /// (`MarkerFence.group`; nil when written by an earlier version).
    public var group: String?
    /// For a marker with a `fence`: when its writer wrote that fence (`MarkerFence.atMs`; nil when
    /// written by an earlier version).
    public var fenceAtMs: Int64?
    /// For a decision (`completed`, `answered`): the encoded final result, exactly as published
    /// (its payload sealed to the requester's key). It travels in the record's `x-decision`
    /// header (`decisionHeader`), not in the value, so reading markers for the duplicate horizon
    /// parses no more than before.
    public var result: [UInt8]?

    /// The header that carries a decision's result.
    public static let decisionHeader = "x-decision"

    /// Creates a marker for the request `identity`.
    public init(_ identity: RequestIdentity, state: State, requestOffset: Int64, atMs: Int64, worker: String, outcome: Outcome? = nil,
                replayOf: String? = nil, fence: Int64? = nil, instance: String? = nil, stamp: FenceStamp = FenceStamp(), result: [UInt8]? = nil) {
        self.init(requestID: identity.requestID, program: identity.program, state: state, requestOffset: requestOffset, atMs: atMs,
                  worker: worker, outcome: outcome, replayOf: replayOf, fence: fence, instance: instance, generation: stamp.generation, result: result)
        group = stamp.group
        fenceAtMs = stamp.atMs
    }

    /// Creates a marker; `program` nil only for a marker as an earlier version wrote it.
    public init(requestID: String, program: String?, state: State, requestOffset: Int64, atMs: Int64, worker: String,
                outcome: Outcome? = nil, replayOf: String? = nil, fence: Int64? = nil, instance: String? = nil, generation: Int32? = nil,
                result: [UInt8]? = nil) {
        self.requestID = requestID
        self.program = program
        self.state = state
        self.requestOffset = requestOffset
        self.atMs = atMs
        self.worker = worker
        self.outcome = outcome
        self.replayOf = replayOf
        self.fence = fence
        self.instance = instance
        self.generation = generation
        self.result = result
    }

    /// Whether this marker decides the request's final result (`result`): after a call
    /// (`answered`), or without one (`answeredWithoutCall`: a rejection or expiry of a request
    /// this owner claimed, decided so that a zombie's answer cannot contradict the new owner's).
    public var isDecision: Bool { state == .completed && (outcome == .answered || outcome == .answeredWithoutCall) && result != nil }

    /// Its writer's fence as the fencing rule compares it (`MarkerFence.supersedes`).
    public var stamp: FenceStamp { FenceStamp(generation: generation, group: group, atMs: fenceAtMs) }

    /// What markers are tracked by: the request's identity, and the dead letter for a replay.
    public var key: Key { Key(program: program, requestID: requestID, replayOf: replayOf) }

    /// The tracking key of request `identity` (or of its replay of dead letter `replayOf`).
    public static func key(_ identity: RequestIdentity, replayOf: String?) -> Key {
        Key(program: identity.program, requestID: identity.requestID, replayOf: replayOf)
    }

    /// What a marker is tracked by: a request identity (program, request id) and, for an
    /// operator's replay, the dead letter it replays (a replay's markers are its own).
    public struct Key: Sendable, Hashable {
        /// The program; nil in a marker of an earlier version, which names none.
        public var program: String?
        /// The request id.
        public var requestID: String
        /// The dead letter replayed (`x-replay-of`), for a replay's markers.
        public var replayOf: String?

        /// Creates a key.
        public init(program: String?, requestID: String, replayOf: String?) {
            self.program = program
            self.requestID = requestID
            self.replayOf = replayOf
        }

        /// The key an earlier version wrote for the same request: without the program.
        public var legacy: Key { Key(program: nil, requestID: requestID, replayOf: replayOf) }

        /// Whether a marker with this key speaks for the request tracked by `key`: the same key,
        /// or this key is a marker of an earlier version (no program) for the same request id and
        /// replay, which speaks for that request id under every program (the rolling-upgrade rule:
        /// a call that may have started is reconciled, never made again).
        public func speaks(for key: Key) -> Bool {
            self == key || (program == nil && self == key.legacy)
        }
    }

    /// How a `completed` request was finished.
    public enum Outcome: String, Sendable {
        /// Its result was published (final, or interim with a reconciliation job of its own).
        case answered
        /// Its result was published without an issuer call (rejected, expired, refused); like
        /// `answered`, a copy of the request is then a duplicate (redelivered, or within the
        /// duplicate horizon). (A worker of an earlier version reads it as `answered`.)
        case answeredWithoutCall = "answered_without_call"
        /// It was dead-lettered: no result was published.
        case deadLettered = "dead_lettered"
        /// A new owner found the previous owner's `started` marker and handed the request to
        /// reconciliation; the previous owner's own answer may still come.
        case recovered
    }

    /// The marker as a Kafka record for markers partition `partition` (= the request's partition).
    public func message(topic: String, partition: Int32) -> KafkaOutgoingMessage {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.key("request_id"); writer.string(requestID)
        if let program { writer.key("program"); writer.string(program) }
        writer.key("state"); writer.string(state.rawValue)
        writer.key("request_offset"); writer.integer(requestOffset)
        writer.key("at"); writer.integer(atMs)
        writer.key("worker"); writer.string(worker)
        if let outcome { writer.key("outcome"); writer.string(outcome.rawValue) }
        if let replayOf { writer.key("replay_of"); writer.string(replayOf) }
        if let fence { writer.key("fence"); writer.integer(fence) }
        if let instance { writer.key("instance"); writer.string(instance) }
        if let generation { writer.key("generation"); writer.integer(Int64(generation)) }
        if let group { writer.key("group"); writer.string(group) }
        if let fenceAtMs { writer.key("fence_at"); writer.integer(fenceAtMs) }
        writer.endObject()
        let headers = result.map { [KafkaHeader(key: Self.decisionHeader, value: $0)] } ?? []
        return KafkaOutgoingMessage(topic: topic, key: Array(requestID.utf8), value: writer.bytes, headers: headers, partition: partition)
    }

    /// Reads a marker record; nil for anything else, including a marker with a field out of
    /// bounds (a `request_id` or `program` the request decoder would refuse, a negative offset, a time outside
    /// 1970-3000, an over-long worker name, a `replay_of` that is not
    /// `topic:partition:offset`, a `fence` that is not an offset, an over-long `instance`). The
    /// value alone: `decode(_:headers:)` reads a decision's result too.
    public static func decode(_ bytes: [UInt8]) -> CallMarker? {
        guard let document = try? JSONParser(maxDepth: 4, maxBytes: 4096).parse(bytes),
              let requestID = document["request_id"]?.stringValue, RecordBounds.isToken(requestID),
              let state = document["state"]?.stringValue.flatMap(State.init(rawValue:)),
              let offset = document["request_offset"]?.int64Value, RecordBounds.isOffset(offset),
              let at = document["at"]?.int64Value, RecordBounds.isTimestamp(at)
        else { return nil }
        let worker = document["worker"]?.stringValue ?? ""
        guard RecordBounds.isText(worker, maxBytes: 256) else { return nil }
        let program = document["program"]?.stringValue
        if document["program"] != nil, !(program.map { RecordBounds.isToken($0) } ?? false) { return nil }
        // An outcome this version does not know reads as none (`answered`), as before.
        let outcome = document["outcome"]?.stringValue.flatMap(Outcome.init(rawValue:))
        let replayOf = document["replay_of"]?.stringValue
        if let replayOf, ReplayReference(replayOf) == nil { return nil }
        let fence = document["fence"]?.int64Value
        if document["fence"] != nil, !(fence.map(RecordBounds.isOffset) ?? false) { return nil }
        let instance = document["instance"]?.stringValue
        if document["instance"] != nil, !(instance.map { RecordBounds.isText($0, maxBytes: 64) } ?? false) { return nil }
        let generation = document["generation"]?.int64Value
        if document["generation"] != nil, !(generation.map { $0 >= 0 && $0 <= Int64(Int32.max) } ?? false) { return nil }
        let group = document["group"]?.stringValue
        if document["group"] != nil, !(group.map { RecordBounds.isText($0, maxBytes: 256) } ?? false) { return nil }
        let fenceAt = document["fence_at"]?.int64Value
        if document["fence_at"] != nil, !(fenceAt.map(RecordBounds.isTimestamp) ?? false) { return nil }
        var marker = CallMarker(requestID: requestID, program: program, state: state, requestOffset: offset, atMs: at, worker: worker,
                                outcome: outcome, replayOf: replayOf, fence: fence, instance: instance, generation: generation.map { Int32($0) })
        marker.group = group
        marker.fenceAtMs = fenceAt
        return marker
    }

    /// Reads a marker record with its headers: a `completed` marker's decision (`decisionHeader`,
    /// at most `RecordBounds.maxResultBytes`; a larger or empty one makes the record unreadable).
    /// A decision of an earlier version (no `program` member) is attributed to the program its
    /// result names; one whose result names none, or another request id, is unreadable.
    public static func decode(_ bytes: [UInt8], headers: [KafkaHeader]) -> CallMarker? {
        guard var marker = decode(bytes) else { return nil }
        guard let header = headers.last(where: { $0.key == decisionHeader }) else { return marker }
        guard marker.state == .completed, let result = header.value, !result.isEmpty,
              result.count <= RecordBounds.maxResultBytes else { return nil }
        marker.result = result
        if marker.program == nil {
            guard let decided = try? ProvisioningResult.decode(result), decided.requestID == marker.requestID,
                  let program = decided.program, RecordBounds.isToken(program) else { return nil }
            marker.program = program
        }
        return marker
    }

    /// The request a marker record names by its Kafka key, when that key is a `request_id` the
    /// request decoder would accept: what is left of a marker whose value cannot be read.
    public static func requestID(fromKey key: [UInt8]?) -> String? {
        guard let key, key.count <= 64, key.allSatisfy({ $0 < 0x80 }) else { return nil }
        let text = String(decoding: key, as: UTF8.self)
        return RecordBounds.isToken(text) ? text : nil
    }
}
