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
                          outcome: document["outcome"]?.stringValue.flatMap(Outcome.init(rawValue:)))
    }
}
