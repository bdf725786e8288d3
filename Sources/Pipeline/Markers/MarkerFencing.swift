import Dispatch
import Kafka
import Observability
import Recovery
import Synchronization

/// Zombie-owner fencing (issue 20 item 7): after an owner's `started` marker is acknowledged at
/// offset `m`, it reads its markers partition up to `m` and calls the issuer only when `FenceLog`
/// says its marker is the first valid `started` for the request and no newer owner's fence comes
/// before it. An owner whose poll thread was blocked (in `committed()`, a drain) while the group
/// gave its partition to another still believes it owns it; this is what stops its call.
///
/// One reader (its own consumer, manually assigned, no group) on one serial queue reads each owned
/// markers partition forward from the end of its catch-up: a verdict needs only the records since
/// the last one read, so one read answers every call waiting on the partition. Every second it
/// also reads each partition to its end, so the commit metadata (bounded by what was read, see
/// `OffsetLedger.fenceRead`) keeps moving when no call is made.
final class MarkerFencing: Sendable {
    /// What a call waiting on its verdict is told.
    enum Confirmation: Sendable, Equatable, CaseIterable {
        /// Call the issuer.
        case call
        /// A newer owner (or a newer assignment in this process) holds the partition: give the request up.
        case fencedOut
        /// Another valid `started` for the request came first: reconcile, never call.
        case startedEarlier
        /// The partition could not be read up to the marker before the call's deadline: do not call.
        case unconfirmed

        /// The `verdict` label of `provisioner_call_fencing_total`.
        var label: String {
            switch self {
            case .call: "call"
            case .fencedOut: "fenced_out"
            case .startedEarlier: "started_earlier"
            case .unconfirmed: "unconfirmed"
            }
        }
    }

    private struct Entry {
        var generation: UInt64
        var log: FenceLog
    }

    private let consumer: KafkaConsumer
    private let topic: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "provisioner.marker-fencing")
    private let entries = Mutex<[Int32: Entry]>([:])
    private let closed = Mutex(false)
    /// How long one read may hold the queue.
    private let attemptMs: Int64
    /// Told what was read: (markers partition, generation, next offset to read, other owners' valid
    /// `started` markers by request offset).
    private let progress: @Sendable (Int32, UInt64, Int64, [Int64: Int64]) -> Void

    init(properties: [String: String], topic: String, logger: Logger, attemptMs: Int64 = 1_000,
         progress: @escaping @Sendable (Int32, UInt64, Int64, [Int64: Int64]) -> Void) throws(KafkaError) {
        var configuration = properties
        configuration["group.id"] = (configuration["group.id"] ?? "provisioner") + ".marker-fencing"
        configuration["enable.auto.commit"] = "false"
        configuration["auto.offset.reset"] = "earliest"
        configuration["fetch.wait.max.ms"] = configuration["fetch.wait.max.ms"] ?? "10"
        consumer = try KafkaConsumer(configuration: configuration, rebalanceListener: nil)
        self.topic = topic
        self.logger = logger
        self.attemptMs = attemptMs
        self.progress = progress
        scheduleAdvance()
    }

    private func scheduleAdvance() {
        queue.asyncAfter(deadline: .now() + .seconds(1)) { [weak self] in
            guard let self, !closed.withLock({ $0 }) else { return }
            advanceAll()
            scheduleAdvance()
        }
    }

    /// Partition `partition` (ledger generation `generation`) was taken with a fence at `epoch`:
    /// read it from `readFrom` (the end of catch-up), knowing the fences catch-up saw.
    func begin(partition: Int32, generation: UInt64, epoch: Int64, readFrom: Int64, fences: [Int64]) {
        entries.withLock { $0[partition] = Entry(generation: generation, log: FenceLog(epoch: epoch, readFrom: readFrom, fences: fences)) }
    }

    /// The partition is no longer owned (a newer generation's `begin` replaces it too).
    func end(partition: Int32) {
        _ = entries.withLock { $0.removeValue(forKey: partition) }
    }

    /// The epoch of generation `generation` of `partition`, when fenced.
    func epoch(partition: Int32, generation: UInt64) -> Int64? {
        entries.withLock { entries in entries[partition].flatMap { $0.generation == generation ? $0.log.epoch : nil } }
    }

    /// Decides whether the `started` marker of `key` (request `requestID`), acknowledged at
    /// `markerOffset` for generation `generation`, may be followed by the call. `committed`: the
    /// partition's committed offset (what concerns earlier requests is forgotten). A read that
    /// fails (a broker outage) is retried until `deadlineMs`, the last moment the call could still
    /// start; then the answer is `unconfirmed`.
    func confirm(partition: Int32, generation: UInt64, key: String, requestID: String, markerOffset: Int64, committed: Int64?,
                 deadlineMs: Int64, completion: @escaping @Sendable (Confirmation, FenceLog.Verdict?) -> Void) {
        queue.async { [self] in
            attemptConfirm(Pending(partition: partition, generation: generation, key: key, requestID: requestID, markerOffset: markerOffset,
                                   committed: committed, deadlineMs: deadlineMs, completion: completion), attempt: 1)
        }
    }

    /// A call waiting for its verdict.
    private struct Pending: Sendable {
        let partition: Int32
        let generation: UInt64
        let key: String
        let requestID: String
        let markerOffset: Int64
        let committed: Int64?
        let deadlineMs: Int64
        let completion: @Sendable (Confirmation, FenceLog.Verdict?) -> Void
    }

    /// One turn on the queue: the verdict when the log has been read past the marker, else one
    /// bounded read; a failed read is tried again later (other calls' turns run meanwhile).
    private func attemptConfirm(_ pending: Pending, attempt: Int) {
        guard !closed.withLock({ $0 }) else { return pending.completion(.unconfirmed, nil) }
        while true {
            let verdict = entries.withLock { entries -> FenceLog.Verdict?? in
                guard var entry = entries[pending.partition], entry.generation == pending.generation else { return .none }
                if let committed = pending.committed { entry.log.forget(before: committed) }
                entries[pending.partition] = entry
                return .some(entry.log.verdict(key: pending.key, requestID: pending.requestID, at: pending.markerOffset))
            }
            switch verdict {
            case .none: return pending.completion(.fencedOut, nil)  // a newer assignment, or no longer owned
            case .some(.some(let verdict)):
                switch verdict {
                case .call: return pending.completion(.call, verdict)
                case .fencedOut: return pending.completion(.fencedOut, verdict)
                case .startedEarlier: return pending.completion(.startedEarlier, verdict)
                }
            case .some(.none):
                break
            }
            let now = Timestamps.nowMs()
            guard now < pending.deadlineMs else {
                logger.error("could not read the markers partition up to a call's own marker before the call's deadline; the issuer is not called",
                             [("partition", .integer(Int64(pending.partition))), ("marker_offset", .integer(pending.markerOffset)),
                              ("attempts", .integer(Int64(attempt)))])
                return pending.completion(.unconfirmed, nil)
            }
            guard read(partition: pending.partition, generation: pending.generation, through: pending.markerOffset,
                       deadline: min(pending.deadlineMs, now + attemptMs)) else { break }
        }
        // As for catch-up: librdkafka may not refresh a moved leader by itself.
        _ = try? consumer.partitionCount(topic: topic, timeoutMs: 500)
        logger.warning("fencing read failed; retried until the call's deadline",
                       [("partition", .integer(Int64(pending.partition))), ("attempt", .integer(Int64(attempt)))])
        queue.asyncAfter(deadline: .now() + .milliseconds(200)) { [self] in attemptConfirm(pending, attempt: attempt + 1) }
    }

    /// Reads every fenced partition to its end (the timer, on the queue).
    private func advanceAll() {
        guard !closed.withLock({ $0 }) else { return }
        // Short and best-effort: a broker outage must not hold the calls waiting on this queue.
        for (partition, entry) in entries.withLock({ $0 }) {
            guard let marks = try? consumer.watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 500) else { return }
            guard marks.high > entry.log.readTo else { continue }
            guard read(partition: partition, generation: entry.generation, through: marks.high - 1,
                       deadline: Timestamps.nowMs() + attemptMs) else { return }
        }
    }

    /// Reads `partition` from where its log stands through offset `last` (and whatever the same
    /// fetches bring); false when it could not get there before `deadline`.
    private func read(partition: Int32, generation: UInt64, through last: Int64, deadline: Int64) -> Bool {
        guard let start = entries.withLock({ $0[partition].flatMap { $0.generation == generation ? $0.log.readTo : nil } }) else { return true }
        guard start <= last else { return true }
        do {
            try consumer.assign([TopicPartitionOffset(topic: topic, partition: partition, offset: start, metadata: nil)])
        } catch {
            logger.error("fencing read could not assign", [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
            return false
        }
        defer { try? consumer.assign([]) }
        var next = start
        while next <= last && Timestamps.nowMs() < deadline {
            var records: [(FenceLog.Record, Int64)] = []
            for result in consumer.poll(maxMessages: 1_000, timeoutMs: 20) {
                guard case .success(let message) = result, message.partition == partition else { continue }
                next = max(next, message.offset + 1)
                records.append((Self.record(message), message.offset))
            }
            guard !records.isEmpty else { continue }
            let read = entries.withLock { entries -> (Int64, [Int64: Int64])? in
                guard var entry = entries[partition], entry.generation == generation else { return nil }
                for (record, offset) in records { entry.log.read(record, at: offset) }
                let foreign = entry.log.takeForeign()
                entries[partition] = entry
                return (entry.log.readTo, foreign)
            }
            guard let (readTo, foreign) = read else { return true }
            progress(partition, generation, readTo, foreign)
        }
        return next > last
    }

    private static func record(_ message: KafkaMessage) -> FenceLog.Record {
        if let marker = CallMarker.decode(message.value) { return .marker(marker) }
        if MarkerFence.decode(message.value) != nil { return .fence }
        return .unreadable(CallMarker.requestID(fromKey: message.key))
    }

    /// Stops the reader: waiting and later confirmations answer `unconfirmed`.
    func close() {
        queue.sync {
            closed.withLock { $0 = true }
            consumer.close()
        }
    }
}
