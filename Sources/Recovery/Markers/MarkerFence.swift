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

    /// Creates a fence record.
    public init(worker: String, atMs: Int64, instance: String) {
        self.worker = worker
        self.atMs = atMs
        self.instance = instance
    }

    /// The fence as a Kafka record for markers partition `partition`.
    public func message(topic: String, partition: Int32) -> KafkaOutgoingMessage {
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.key("state"); writer.string("fence")
        writer.key("at"); writer.integer(atMs)
        writer.key("worker"); writer.string(worker)
        writer.key("instance"); writer.string(instance)
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
        return MarkerFence(worker: worker, atMs: at, instance: instance)
    }
}
