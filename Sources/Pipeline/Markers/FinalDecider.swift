import Kafka
import Observability
import Recovery
import Synchronization

/// **A final is decided once.** The final result of a request whose issuer call may have
/// happened (a `started` marker was written) is first written as a *decision* — a `completed`
/// marker carrying the encoded result (`CallMarker.isDecision`) — to the request's markers
/// partition, and only then published. The markers partition is the one log that the caller, a
/// zombie caller, the partition's next owner and any reconciler read in the same order, so the
/// first decision for a marker key after its `started` marker is the answer; whoever publishes a
/// final for the request publishes that one, and two different finals cannot both be published.
///
/// - The caller (the owner that made the call) asks `decideAsCaller`: when no other process's
///   fence lies between its epoch and its decision (`MarkerFencing`, usually without a read), no
///   other owner existed meanwhile, so no hand-over — and no other decision — can precede its
///   own. Otherwise (the partition changed hands during the call) it reads the partition from its
///   `started` marker and publishes the first decision it finds.
/// - A reconciler of a handed-over request asks `decideAsReconciler`: it always reads, from the
///   hand-over position to its own decision.
/// - A redelivered request whose catch-up read a decision publishes it again (`MarkerIndex.decision`).
///
/// Threads: any; completions run on the producer's thread, fencing's queue or the reader's queue.
final class FinalDecider: Sendable {
    /// What to publish.
    enum Verdict: Sendable, Equatable {
        /// This decision is the first: publish it.
        case own
        /// An earlier decision exists: publish it (these bytes) instead.
        case earlier([UInt8])
        /// The decision could not be written (it is written until acknowledged, so only a producer
        /// that failed for good gives this): nothing is published here; the record is given up and
        /// the next owner publishes the first decision or reconciles.
        case undecided
        /// Written, but the partition could not be read to check it is the first: decide again later.
        case unreadable
        /// An answer without a call whose writer was fenced out: a newer owner holds the partition
        /// and answers the request; publish nothing.
        case withdrawn

        /// The `verdict` label of `provisioner_decisions_total`.
        var label: String {
            switch self {
            case .own: "own"
            case .earlier: "earlier"
            case .undecided: "undecided"
            case .unreadable: "unreadable"
            case .withdrawn: "withdrawn"
            }
        }

        /// Every value of `label`.
        static let labels = ["own", "earlier", "undecided", "unreadable", "withdrawn"]

        /// The rule: what a read of the request's markers from the hand-over (or `started`)
        /// position up to and including the own decision at `own` says. The first decision read
        /// wins; `unreadable` when the read did not even reach the own decision.
        init(firstOf found: MarkerLookUp, own: Int64) {
            guard let decision = found.decision, decision.offset <= own else {
                self = .unreadable
                return
            }
            self = decision.offset == own ? .own : .earlier(decision.result)
        }
    }

    private let publisher: OutputPublisher
    private let fencing: MarkerFencing
    private let topic: String
    private let logger: Logger
    private let makeReader: @Sendable () throws(KafkaError) -> MarkerCatchUp
    private let reader = Mutex<MarkerCatchUp?>(nil)
    private let closed = Mutex(false)
    /// Where a read that did not reach the own decision is tried again.
    private let retryQueue: any WorkQueue
    /// Decisions that found an earlier one (`provisioner_decisions_total{verdict="earlier"}`) and the rest.
    private let counted: @Sendable (Verdict) -> Void

    init(publisher: OutputPublisher, fencing: MarkerFencing, topic: String, logger: Logger, retryQueue: any WorkQueue,
         counted: @escaping @Sendable (Verdict) -> Void = { _ in },
         makeReader: @escaping @Sendable () throws(KafkaError) -> MarkerCatchUp) {
        self.publisher = publisher
        self.fencing = fencing
        self.topic = topic
        self.logger = logger
        self.retryQueue = retryQueue
        self.counted = counted
        self.makeReader = makeReader
    }

    /// The worker's markers reader for look-ups (made on first use; shared with reconciliation).
    func markerReader() throws(KafkaError) -> MarkerCatchUp {
        try reader.withLock { existing throws(KafkaError) -> MarkerCatchUp in
            if let existing { return existing }
            let created = try makeReader()
            existing = created
            return created
        }
    }

    /// Closes the reader: reads still retrying end `unreadable`.
    func close() {
        closed.withLock { $0 = true }
        reader.withLock { $0 }?.close()
    }

    /// The caller's decision: `marker` (a decision) is written with `write` (`MarkerWriter`, which
    /// tells fencing and the ledger), then checked against the fences after `epoch`; the
    /// partition is read from `startedAt` (its `started` marker) only when another process's fence
    /// lies between. `deadlineMs`: how long fencing may try to read a gap.
    func decideAsCaller(_ marker: CallMarker, partition: Int32, startedAt: Int64, epoch: Int64, deadlineMs: Int64,
                        write: (CallMarker, @escaping @Sendable (Settler.MarkerWrite) -> Void) -> Void,
                        completion: @escaping @Sendable (Verdict) -> Void) {
        write(marker) { [self] written in
            guard written.delivered, let offset = written.offset else {
                logger.warning("decision marker not written: the result is not published here",
                               [("error", .string(written.error?.description ?? "unknown"))])
                return finish(.undecided, completion)
            }
            fencing.confirm(partition: partition, epoch: epoch, marker: offset, deadlineMs: deadlineMs) { [self] confirmation in
                switch confirmation {
                case .call:
                    finish(.own, completion)
                case .unconfirmed:
                    // Only past `deadlineMs` (or when the worker stops): nothing is published here.
                    // The decision is in the log: whoever answers the request next publishes the first one.
                    finish(.withdrawn, completion)
                case .fencedOut:
                    firstDecision(marker.key, partition: partition, from: startedAt, own: offset, completion: { [self] verdict in
                        finish(verdict == .unreadable ? .withdrawn : verdict, completion)
                    })
                }
            }
        }
    }

    /// The decision of an answer given without a call to a request this owner claimed (a
    /// rejection, an expiry, a refusal): `marker` (a decision, `answeredWithoutCall`, carrying the
    /// owner's epoch) is written, then checked against the fences after `epoch`. When another
    /// process's newer fence lies between, this owner is a zombie: the new owner's catch-up may not
    /// have seen this decision (it landed after the fence), so it answers the request itself, and
    /// this answer must not be published (`withdrawn`; every reader ignores such a decision,
    /// `InheritedMarkers.isFencedOut`). Otherwise no other owner existed since the epoch: `own`.
    func decideWithoutCall(_ marker: CallMarker, partition: Int32, epoch: Int64, deadlineMs: Int64,
                           write: (CallMarker, @escaping @Sendable (Settler.MarkerWrite) -> Void) -> Void,
                           completion: @escaping @Sendable (Verdict) -> Void) {
        write(marker) { [self] written in
            guard written.delivered, let offset = written.offset else {
                logger.warning("decision marker not written: the answer is not published here",
                               [("error", .string(written.error?.description ?? "unknown"))])
                return finish(.undecided, completion)
            }
            fencing.confirm(partition: partition, epoch: epoch, marker: offset, deadlineMs: deadlineMs) { [self] confirmation in
                // Unconfirmed only past `deadlineMs` (or when the worker stops): withdrawn, never published unchecked.
                finish(confirmation == .call ? .own : .withdrawn, completion)
            }
        }
    }

    /// A reconciler's decision for a handed-over request: `marker` (a decision) is written to
    /// markers partition `partition`, which is then read from `from` (the hand-over position) to
    /// it; the first decision found is the answer.
    func decideAsReconciler(_ marker: CallMarker, partition: Int32, from: Int64, completion: @escaping @Sendable (Verdict) -> Void) {
        fencing.writing(partition)
        publisher.publish([marker.message(topic: topic, partition: partition)]) { [self] outcome in
            let offset = outcome.reports.first??.offset
            fencing.written(partition, offset: offset)
            guard outcome.allDelivered, let offset else {
                logger.warning("reconciliation decision marker not written; decided again later",
                               [("error", .string(outcome.lastError?.description ?? "unknown"))])
                return finish(.unreadable, completion)
            }
            firstDecision(marker.key, partition: partition, from: from, own: offset) { [self] verdict in
                finish(verdict, completion)
            }
        }
    }

    /// Reads the first decision for `key` from `from` on: `own` when it is the one at `own`.
    /// `retrying`: a read that does not reach the own decision is tried again every 200 ms until it
    /// does (the markers partition may be unreadable for a while), `unreadable` only once the reader closed.
    private func firstDecision(_ key: CallMarker.Key, partition: Int32, from: Int64, own: Int64, retrying: Bool = true,
                               completion: @escaping @Sendable (Verdict) -> Void) {
        let reader: MarkerCatchUp
        do {
            reader = try markerReader()
        } catch {
            logger.error("markers cannot be read to check a decision", [("error", .string(error.description))])
            return completion(.unreadable)
        }
        reader.lookUp(key: key, partition: partition, from: from) { [self] found in
            let verdict = Verdict(firstOf: found, own: own)
            guard verdict == .unreadable, retrying, !isClosed else { return completion(verdict) }
            retryQueue.asyncAfter(milliseconds: 200) { [self] in
                firstDecision(key, partition: partition, from: from, own: own, completion: completion)
            }
        }
    }

    /// Whether `close` was called.
    private var isClosed: Bool { closed.withLock { $0 } }

    private func finish(_ verdict: Verdict, _ completion: @Sendable (Verdict) -> Void) {
        counted(verdict)
        completion(verdict)
    }
}
