import Kafka

/// Reads one markers partition at a time from a position (the "read a partition" port of the
/// deterministic simulation): `KafkaMarkerLogReader` (its own consumer, manually assigned, no
/// group) in production. Used by one serial queue at a time: marker catch-up, fencing's gap reads,
/// and the look-ups of `FinalDecider` and reconciliation each have their own.
package protocol MarkerLogReader: AnyObject, Sendable {
    /// The partition's low and high watermarks.
    func watermarks(partition: Int32) throws(KafkaError) -> (low: Int64, high: Int64)
    /// The first offset whose record timestamp is at or after `timestampMs`; nil when none is.
    func offset(partition: Int32, atOrAfterTimestampMs timestampMs: Int64) throws(KafkaError) -> Int64?
    /// The record timestamp of the first record at or after `offset` (nil when it has none).
    func timestamp(partition: Int32, at offset: Int64) throws(KafkaError) -> Int64?
    /// Reads from `from` up to (not including) `upTo`, handing each record to `visit` in offset
    /// order, and returns the first offset not reached (`upTo` when everything was read). It
    /// gives up when no new record came for `stallMs`, or after `limitMs` in all.
    func read(partition: Int32, from: Int64, upTo: Int64, stallMs: Int64, limitMs: Int64, visit: (KafkaMessage) -> Void) -> Int64
    /// Asks the cluster for fresh metadata (a moved leader is not always noticed otherwise).
    func refreshMetadata()
    /// Releases the reader.
    func close()
}
