import Contract
import Kafka
import Observability
import Recovery

/// The only place that touches a request's exactly-once bookkeeping: the duplicate filter's
/// claim, the offset ledger, the `completed` marker, the duplicate horizon and the scheduler's
/// slot with its breaker verdict. `RequestFlow` calls `settle` once per record, at whichever exit
/// it takes (`RecordExit`); `Settlement` says what that exit does. A call's slot is freed as soon
/// as the call ends (`releaseSlot`), before its answer is settled, or by `settle` when the call is
/// given up before it was made.
///
/// Threads: any. Its parts are locked; the marker write completes on the producer's thread,
/// where only these short updates run.
struct Settler: Sendable {
    /// What writing a marker reported.
    struct MarkerWrite: Sendable {
        /// Whether Kafka acknowledged it.
        let delivered: Bool
        /// Its offset, when acknowledged with one.
        let offset: Int64?
        /// The last error, when not acknowledged.
        let error: KafkaError?
    }

    let duplicates: DuplicateFilter
    let ledger: OffsetLedger
    let horizon: DuplicateHorizon
    let workerID: String
    let logger: Logger
    let clock: @Sendable () -> Int64
    /// Frees a call's slot in the scheduler (`WorkScheduler.finish`) with the breaker's verdict
    /// on the call (nil: none, the call was not made or its answer says nothing of the issuer's health).
    let freeSlot: @Sendable (_ ticketID: UInt64, _ success: Bool?) -> Void
    /// Gives back a program's `max_unsettled` place (`UnsettledQuota.release`).
    let releaseQuota: @Sendable (String) -> Void
    /// Writes a marker for the record at an origin (`MarkerWriter.write`); `untilAcknowledged`: retried
    /// until Kafka acknowledges it (or the producer fails for good), else the configured attempts.
    let writeMarker: @Sendable (CallMarker, RecordOrigin, _ untilAcknowledged: Bool, @escaping @Sendable (MarkerWrite) -> Void) -> Void
    /// `CoreMutations.answersWithoutCallOutOfHorizon` (off in production).
    var withoutCallOutOfHorizon = false

    /// Settles the record at `origin` after `exit`. `identity`: the request (program, request id)
    /// it answers for, when known; `claimed`: whether this record claimed that identity in the
    /// duplicate filter (a malformed or unauthentic message naming another request must never
    /// free that one). `slot`: a scheduler slot still held (a call given up before it was made).
    func settle(_ exit: RecordExit, origin: RecordOrigin, identity: RequestIdentity?, claimed: Bool, slot: UInt64? = nil) {
        let settlement = Settlement(exit, claimed: claimed)
        let recordsInHorizon = settlement.recordsInHorizon && !(withoutCallOutOfHorizon && settlement.completedMarker == .answeredWithoutCall)
        if let slot { freeSlot(slot, nil) }
        if let program = origin.quotaProgram { releaseQuota(program) }
        guard let outcome = settlement.completedMarker, let identity else {
            if recordsInHorizon, let identity {
                horizon.record(identity, in: origin.partition, answeredAtMs: clock(), nowMs: clock())
            }
            finish(settlement, origin: origin, identity: identity)
            return
        }
        let marker = CallMarker(identity, state: .completed, requestOffset: origin.offset, atMs: clock(),
                                worker: workerID, outcome: outcome, replayOf: origin.replayOf)
        guard settlement.awaitsMarker else {
            // After a decision: the marker only says "published"; lost, the decision is published again.
            if recordsInHorizon { horizon.record(identity, in: origin.partition, answeredAtMs: marker.atMs, nowMs: clock()) }
            writeMarker(marker, origin, false) { _ in }
            finish(settlement, origin: origin, identity: identity)
            return
        }
        // The `completed` marker is what a next owner relies on to ignore the request instead of
        // answering it again: the offset completes only once it is acknowledged. It is retried
        // until then; only a producer that failed for good gives up, and then the offset is
        // abandoned (redone by the next owner, which finds the decision or reconciles).
        writeMarker(marker, origin, true) { [self] write in
            guard write.delivered else {
                logger.error("completed marker not written: the request's offset is not completed and is redone by the next owner",
                             [("error", .string(write.error?.description ?? "unknown"))])
                return finish(Settlement(.abandoned, claimed: settlement.claim != .untouched), origin: origin, identity: identity)
            }
            if recordsInHorizon {
                horizon.record(identity, in: origin.partition, answeredAtMs: marker.atMs, nowMs: clock())
            }
            finish(settlement, origin: origin, identity: identity)
        }
    }

    /// Frees the slot of a call that ended (or was not made), before its answer is settled: the
    /// scheduler starts the next call at once. `success`: the breaker's verdict on the call.
    func releaseSlot(_ ticketID: UInt64, success: Bool?) {
        freeSlot(ticketID, success)
    }

    private func finish(_ settlement: Settlement, origin: RecordOrigin, identity: RequestIdentity?) {
        if let identity {
            switch settlement.claim {
            case .finish: duplicates.finish(identity, owner: .init(origin), nowMs: clock())
            case .release: duplicates.release(identity, owner: .init(origin))
            case .untouched: break
            }
        }
        switch settlement.offset {
        case .complete: ledger.complete(origin.partition, offset: origin.offset, generation: origin.generation)
        case .abandon: ledger.abandon(origin.partition, offset: origin.offset, generation: origin.generation)
        }
    }
}
