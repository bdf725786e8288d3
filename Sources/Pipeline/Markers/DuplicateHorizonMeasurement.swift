import Dispatch
import Kafka
import Observability
import Recovery
import Synchronization

/// Measures the duplicate horizon with its real parts (for `provisioner-bench horizon`): an
/// `AnsweredIndex` filled to a size, and a marker catch-up (`MarkerCatchUp` with a horizon read)
/// of a markers partition.
package enum DuplicateHorizonMeasurement {
    /// An index filled with `entries` distinct ids: milliseconds taken, bytes allocated, lookups per second.
    package static func fill(entries: Int) -> (fillMs: Int64, bytes: Int, lookupsPerSecond: Double, held: Int) {
        var index = AnsweredIndex(maxEntries: entries)
        let started = Timestamps.nowMs()
        let now = started
        for number in 0..<entries {
            index.insert(AnsweredIndex.Fingerprint(program: "bench-program", requestID: "req-\(number)-0123456789abcdef", partition: 0), expiresAtMs: now + 86_400_000, nowMs: now)
        }
        let fillMs = Timestamps.nowMs() - started
        let lookups = 1_000_000
        let lookupStart = Timestamps.nowMs()
        var found = 0
        for number in 0..<lookups where index.contains(AnsweredIndex.Fingerprint(program: "bench-program", requestID: "req-\(number * 7 % entries)-0123456789abcdef", partition: 0), nowMs: now) {
            found += 1
        }
        let lookupMs = max(1, Timestamps.nowMs() - lookupStart)
        precondition(found == lookups, "the filled index lost entries")
        return (fillMs, index.allocatedBytes, Double(lookups) * 1000 / Double(lookupMs), index.count)
    }

    /// Reads markers partition `partition` of `topic` with a horizon of `horizonMs` as a newly
    /// assigned worker would (from the horizon, hand-over position at the end): milliseconds
    /// taken and the answered ids the index holds.
    package static func catchUp(properties: [String: String], topic: String, partition: Int32, horizonMs: Int64,
                               maxEntries: Int) throws -> (readMs: Int64, held: Int, bytes: Int) {
        let reader = MarkerCatchUp(reader: try KafkaMarkerLogReader(properties: properties, topic: topic, purpose: "marker-reader"),
                                   queue: DispatchExecutor().serialQueue(label: "provisioner.horizon-measurement", onPool: false),
                                   logger: Logger(label: "bench", minimumLevel: .error, handler: DiscardingLogHandler()), timeoutMs: 30_000)
        defer { reader.close() }
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<(Int, Int)?>(nil)
        let now = Timestamps.nowMs()
        let started = Timestamps.nowMs()
        // One share (no program configured) with room for `maxEntries`.
        let index = DuplicateHorizon(horizonMs: horizonMs, maxBytes: AnsweredIndex.allocatedBytes(maxEntries: maxEntries), shares: [:])
        let horizon = MarkerHorizonRead(sinceMs: now - horizonMs, horizonMs: horizonMs, nowMs: now)
        // Hand-over position at the very end: every marker is read for the horizon only.
        reader.read(partition: partition, from: Int64.max / 2, horizon: horizon, answers: { index.add($0, nowMs: now) }, while: { true }) { _, _ in
            outcome.withLock { $0 = (index.count, index.allocatedBytes) }
            done.signal()
        }
        done.wait()
        let (held, bytes) = outcome.withLock { $0 } ?? (0, 0)
        return (Timestamps.nowMs() - started, held, bytes)
    }
}
