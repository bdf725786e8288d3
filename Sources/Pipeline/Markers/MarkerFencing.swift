import Contract
import Kafka
import Observability
import Recovery
import Synchronization

/// Zombie-owner fencing: after an owner's `started` marker is acknowledged at
/// offset `m`, it calls the issuer only when no fence of another process lies between its own
/// fence and `m` (`FenceLog`). An owner whose poll thread was blocked (in `committed()`, a drain)
/// while the group gave its partition to another still believes it owns it; the new owner's fence
/// in the markers partition is what stops its call.
///
/// Cheap on the request path: every write of this process to a markers partition (fence,
/// `started`, `completed`) is counted (`writing`/`written`), and when every offset before the
/// marker is one of its own acknowledged writes the verdict is given at once, without reading.
/// Only a gap (another process wrote to the partition, or an own write's offset is unknown) is
/// read, by one reader (its own consumer, manually assigned, no group) on one serial queue, after
/// the own writes in flight that could fill it have been reported (or 20 ms).
///
/// Threads: `writing`, `written`, `fenced`, `confirm` and `release` run on any thread (the
/// producer's delivery thread mostly) under one lock; completions run outside it, on the calling
/// thread or the reader's queue; the consumer is touched only on the queue.
final class MarkerFencing: Sendable {
    /// What a call waiting on its verdict is told.
    enum Confirmation: Sendable, Equatable, CaseIterable {
        /// Call the issuer.
        case call
        /// Another process's fence precedes the marker (a newer owner holds the partition): give
        /// the request up; the new owner answers it.
        case fencedOut
        /// The partition could not be read up to the marker before the call's last start time: do not call.
        case unconfirmed

        /// The `verdict` label of `provisioner_call_fencing_total`.
        var label: String {
            switch self {
            case .call: "call"
            case .fencedOut: "fenced_out"
            case .unconfirmed: "unconfirmed"
            }
        }
    }

    private struct Pending: Sendable {
        let epoch: Int64
        let marker: Int64
        let deadlineMs: Int64
        let completion: @Sendable (Confirmation) -> Void
    }

    private struct Partition: Sendable {
        var log: FenceLog?
        /// Own writes to the partition not yet reported.
        var inFlight = 0
        var pending: [Pending] = []
        /// Whether the partition is held by this process (a `release` clears it).
        var held = false
        /// Whether a gap read is queued or running.
        var filling = false
        /// The ledger generation holding the partition and its epoch (its fence's offset and stamp).
        var epoch: (generation: UInt64, epoch: Epoch)?
    }

    /// An owner's epoch: the offset of its fence and what the fencing rule compares of it.
    struct Epoch: Sendable, Equatable {
        var offset: Int64
        var stamp: FenceStamp
    }

    /// This process (random per start); written in its fences and `started` markers.
    let instance: String
    private let reader: any MarkerLogReader
    private let logger: Logger
    private let queue: any WorkQueue
    private let clock: @Sendable () -> Int64
    private let partitions = Mutex<[Int32: Partition]>([:])
    private let closed = Mutex(false)
    /// How long one gap read may hold the queue.
    private let attemptMs: Int64
    /// How long a gap may wait for own writes in flight before it is read.
    private let waitMs: Int64
    /// Counts the fences read that landed late (`provisioner_late_fences_total`).
    private let lateFences: Counter?

    /// Fencing for process `instance`, reading gaps through `reader` on `queue` (serial: the
    /// reader is used there only), deadlines on `clock`.
    init(reader: any MarkerLogReader, queue: any WorkQueue, clock: @escaping @Sendable () -> Int64, logger: Logger,
         instance: String = Crypto.hex(Crypto.randomBytes(8)), attemptMs: Int64 = 1_000, waitMs: Int64 = 20, lateFences: Counter? = nil) {
        self.lateFences = lateFences
        self.reader = reader
        self.queue = queue
        self.clock = clock
        self.logger = logger
        self.instance = instance
        self.attemptMs = attemptMs
        self.waitMs = waitMs
    }

    /// An own write to markers partition `partition` is about to be sent.
    func writing(_ partition: Int32) {
        partitions.withLock { $0[partition, default: Partition()].inFlight += 1 }
    }

    /// An own write to `partition` ended: acknowledged at `offset`, or failed (nil: its offset, if
    /// it was written at all, stays a gap to read).
    func written(_ partition: Int32, offset: Int64?) {
        let (resolved, fill) = partitions.withLock { partitions -> ([(Pending, Confirmation)], Bool) in
            partitions.mutate(partition) { entry in
                entry.inFlight = max(0, entry.inFlight - 1)
                if let offset { entry.log?.ownWrite(at: offset) }
                let resolved = Self.resolve(&entry)
                let fill = Self.wantsFill(entry)
                if fill { entry.filling = true }
                return (resolved, fill)
            } ?? ([], false)
        }
        for (pending, confirmation) in resolved { pending.completion(confirmation) }
        if fill { queue.async { [self] in self.fill(partition, attempt: 1) } }
    }

    /// This process's fence in `partition` was acknowledged at `offset` for ledger generation
    /// `generation`, stamped `stamp`: it holds the partition with that epoch (a log already
    /// followed, for an earlier assignment of this process, goes on). Report the write with
    /// `written` too.
    func fenced(_ partition: Int32, at offset: Int64, generation: UInt64, stamp: FenceStamp) {
        partitions.withLock { partitions in
            var entry = partitions[partition, default: Partition()]
            if entry.log == nil {
                entry.log = FenceLog(fence: offset, stamp: stamp)
            } else {
                entry.log?.ownFence(at: offset, stamp: stamp)
            }
            entry.held = true
            entry.epoch = (generation, Epoch(offset: offset, stamp: stamp))
            partitions[partition] = entry
        }
    }

    /// The epoch of generation `generation` of `partition`, once its fence is acknowledged.
    func epoch(_ partition: Int32, generation: UInt64) -> Epoch? {
        partitions.withLock { partitions in
            partitions[partition]?.epoch.flatMap { $0.generation == generation ? $0.epoch : nil }
        }
    }

    /// The partition is no longer held: its log is dropped once no call waits on it.
    func release(_ partition: Int32) {
        partitions.withLock { partitions in
            guard var entry = partitions[partition] else { return }
            entry.held = false
            entry.epoch = nil
            if entry.pending.isEmpty && entry.inFlight == 0 { partitions[partition] = nil } else { partitions[partition] = entry }
        }
    }

    /// Decides whether the `started` marker acknowledged at `marker`, written with epoch `epoch`
    /// (report its own write with `written` first), may be followed by the call. At once (on the
    /// calling thread) when every offset before it is accounted for; else after the gap is read,
    /// retried until `deadlineMs` (the last moment the call could start), then `unconfirmed`.
    func confirm(partition: Int32, epoch: Int64, marker: Int64, deadlineMs: Int64, completion: @escaping @Sendable (Confirmation) -> Void) {
        let pending = Pending(epoch: epoch, marker: marker, deadlineMs: deadlineMs, completion: completion)
        let now: Confirmation? = partitions.withLock { partitions in
            guard var entry = partitions[partition], let log = entry.log else { return .fencedOut }
            switch log.verdict(epoch: epoch, marker: marker) {
            case .call: return .call
            case .fencedOut: return .fencedOut
            case .unknown:
                entry.pending.append(pending)
                partitions[partition] = entry
                return nil
            }
        }
        if let now { return completion(now) }
        queue.asyncAfter(milliseconds: waitMs) { [self] in
            let start = partitions.withLock { partitions -> Bool in
                guard var entry = partitions[partition], !entry.pending.isEmpty, !entry.filling else { return false }
                entry.filling = true
                partitions[partition] = entry
                return true
            }
            if start { fill(partition, attempt: 1) }
        }
    }

    /// Takes the pending calls whose verdict is known.
    private static func resolve(_ entry: inout Partition) -> [(Pending, Confirmation)] {
        guard let log = entry.log, !entry.pending.isEmpty else { return [] }
        var resolved: [(Pending, Confirmation)] = []
        entry.pending.removeAll { pending in
            switch log.verdict(epoch: pending.epoch, marker: pending.marker) {
            case .call: resolved.append((pending, .call)); return true
            case .fencedOut: resolved.append((pending, .fencedOut)); return true
            case .unknown: return false
            }
        }
        return resolved
    }

    /// Whether a gap must be read now: some offset before a waiting marker cannot be filled by
    /// the own writes still in flight, or the own writes seen past a gap grow (memory bound).
    private static func wantsFill(_ entry: Partition) -> Bool {
        guard !entry.filling, let log = entry.log else { return false }
        if log.own.count > 512 { return true }
        guard let highest = entry.pending.map(\.marker).max() else { return false }
        return log.missing(before: highest) > Int64(entry.inFlight)
    }

    /// Reads the partition's gap (on the queue): up to the highest waiting marker, or to the end
    /// when none waits. A failed read is tried again after 200 ms until every waiting call's
    /// deadline has passed (those are answered `unconfirmed`).
    private func fill(_ partition: Int32, attempt: Int) {
        guard !closed.withLock({ $0 }) else { return failAll(partition) }
        guard let (from, through) = partitions.withLock({ partitions -> (Int64, Int64?)? in
            guard let entry = partitions[partition], let log = entry.log else { return nil }
            return (log.known, entry.pending.map(\.marker).max().map { $0 - 1 })
        }) else { return }
        let reached = read(partition, from: from, through: through)
        let nowMs = clock()
        let (resolved, again) = partitions.withLock { partitions -> ([(Pending, Confirmation)], Bool) in
            guard let (resolved, again, drop) = partitions.mutate(partition, { entry -> ([(Pending, Confirmation)], Bool, Bool) in
                var resolved = Self.resolve(&entry)
                entry.pending.removeAll { pending in
                    guard pending.deadlineMs <= nowMs else { return false }
                    resolved.append((pending, .unconfirmed))
                    return true
                }
                let again = !entry.pending.isEmpty
                entry.filling = again
                return (resolved, again, !entry.held && entry.pending.isEmpty && entry.inFlight == 0)
            }) else { return ([], false) }
            if drop { partitions[partition] = nil }
            return (resolved, again)
        }
        for (pending, confirmation) in resolved {
            if confirmation == .unconfirmed {
                logger.error("could not read the markers partition up to a call's own marker before the call's last start time; the issuer is not called",
                             [("partition", .integer(Int64(partition))), ("attempts", .integer(Int64(attempt)))])
            }
            pending.completion(confirmation)
        }
        guard again else { return }
        if !reached {
            // As for catch-up: librdkafka may not refresh a moved leader by itself.
            reader.refreshMetadata()
            logger.warning("fencing read failed; retried until the call's last start time",
                           [("partition", .integer(Int64(partition))), ("attempt", .integer(Int64(attempt)))])
        }
        queue.asyncAfter(milliseconds: reached ? 0 : 200) { [self] in fill(partition, attempt: attempt + 1) }
    }

    private func failAll(_ partition: Int32) {
        let pending = partitions.withLock { partitions -> [Pending] in
            defer { partitions[partition] = nil }
            return partitions[partition]?.pending ?? []
        }
        for waiting in pending { waiting.completion(.unconfirmed) }
    }

    /// Reads `partition` from `from` through offset `through` (to its end when nil) into its log;
    /// false when it could not get there within one attempt (`attemptMs`).
    private func read(_ partition: Int32, from: Int64, through: Int64?) -> Bool {
        let last: Int64
        if let through {
            last = through
        } else {
            guard let marks = try? reader.watermarks(partition: partition) else { return false }
            partitions.withLock { $0[partition]?.log?.readEnd(marks.low) }
            last = marks.high - 1
        }
        guard from <= last else { return true }
        var records: [(Int64, MarkerFence?)] = []
        let next = reader.read(partition: partition, from: from, upTo: last + 1, stallMs: attemptMs, limitMs: attemptMs) { message in
            records.append((message.offset, isForeignFence(message)))
        }
        let late = partitions.withLock { partitions in
            records.filter { partitions[partition]?.log?.read(at: $0.0, foreignFence: $0.1) == true }.count
        }
        if late > 0 { lateFences?.increment(by: late) }
        return next > last
    }

    /// A fence of another process (fences have no key; every marker has one), or nil.
    private func isForeignFence(_ message: KafkaMessage) -> MarkerFence? {
        guard message.key == nil, let fence = MarkerFence.decode(message.value), fence.instance != instance else { return nil }
        return fence
    }

    /// Stops the reader: waiting and later confirmations answer `unconfirmed`.
    func close() {
        queue.sync {
            closed.withLock { $0 = true }
            reader.close()
        }
        let all = partitions.withLock { partitions -> [Pending] in
            defer { partitions = [:] }
            return partitions.values.flatMap(\.pending)
        }
        for waiting in all { waiting.completion(.unconfirmed) }
    }
}
