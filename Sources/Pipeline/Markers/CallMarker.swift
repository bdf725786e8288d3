import Contract
import Kafka

/// A write-ahead record of an issuer call, co-partitioned with its request in the markers topic:
/// `started` is acknowledged before the issuer is called; `completed` after the request's outputs
/// are acknowledged. A new owner of the partition that finds `started` without `completed` knows
/// the issuer may have been called and reconciles instead of calling again. A `completed` marker
/// also says how the request was finished (`outcome`).
struct CallMarker: Sendable, Hashable {
    /// Where the call stands.
    enum State: String, Sendable { case started, completed }

    var requestID: String
    var state: State
    var requestOffset: Int64
    var atMs: Int64
    var worker: String
    /// For `completed`: how the request was finished; nil for `started` (and for markers written
    /// before the field existed, which count as `answered`).
    var outcome: Outcome?
    /// The dead letter this attempt replays (`x-replay-of`); nil for the original request. A
    /// replay's markers are its own: the original's `completed` does not finish it, and its
    /// `started` survives a crash like the original's.
    var replayOf: String?

    /// What markers are tracked by: the request id, and the dead letter for a replay.
    var key: String { Self.key(requestID: requestID, replayOf: replayOf) }

    /// The tracking key of a request (or of its replay of dead letter `replayOf`).
    static func key(requestID: String, replayOf: String?) -> String {
        replayOf.map { requestID + "\u{1F}" + $0 } ?? requestID
    }

    /// How a `completed` request was finished.
    enum Outcome: String, Sendable {
        /// Its result was published (final, or interim with a reconciliation job of its own).
        case answered
        /// It was dead-lettered: no result was published.
        case deadLettered = "dead_lettered"
        /// A new owner found the previous owner's `started` marker and handed the request to
        /// reconciliation; the previous owner's own answer may still come.
        case recovered
    }

    /// The marker as a Kafka record for markers partition `partition` (= the request's partition).
    func message(topic: String, partition: Int32) -> KafkaOutgoingMessage {
        var writer = JSONWriter(capacity: 128)
        writer.beginObject()
        writer.key("request_id"); writer.string(requestID)
        writer.key("state"); writer.string(state.rawValue)
        writer.key("request_offset"); writer.integer(requestOffset)
        writer.key("at"); writer.integer(atMs)
        writer.key("worker"); writer.string(worker)
        if let outcome { writer.key("outcome"); writer.string(outcome.rawValue) }
        if let replayOf { writer.key("replay_of"); writer.string(replayOf) }
        writer.endObject()
        return KafkaOutgoingMessage(topic: topic, key: Array(requestID.utf8), value: writer.bytes, headers: [], partition: partition)
    }

    /// Reads a marker record; nil for anything else.
    static func decode(_ bytes: [UInt8]) -> CallMarker? {
        guard let document = try? JSONParser(maxDepth: 4, maxBytes: 4096).parse(bytes),
              let requestID = document["request_id"]?.stringValue,
              let state = document["state"]?.stringValue.flatMap(State.init(rawValue:)),
              let offset = document["request_offset"]?.int64Value,
              let at = document["at"]?.int64Value
        else { return nil }
        return CallMarker(requestID: requestID, state: state, requestOffset: offset, atMs: at,
                          worker: document["worker"]?.stringValue ?? "",
                          outcome: document["outcome"]?.stringValue.flatMap(Outcome.init(rawValue:)),
                          replayOf: document["replay_of"]?.stringValue)
    }
}
