import Contract
import Kafka
import Recovery
@testable import Pipeline

/// One simulated worker process. Its state is the worker's real core types — the partition
/// lifecycle and its gate (`PartitionLifecycle`), the offset ledger and its commit metadata
/// (`OffsetLedger`, `CommitMetadata`), the marker index filled by catch-up (`MarkerIndex`,
/// `InheritedMarkers.add`), the duplicate filter (`DuplicateFilter`), zombie fencing's log and
/// verdict (`FenceLog`), the decision look-up and rule (`MarkerCatchUp.LookUp.add`,
/// `FinalDecider.Verdict(firstOf:own:)`) and the settlement table (`Settlement`) — driven in the
/// order `RequestConsumer`, `RequestFlow`, `FinalDecider`, `Settler` and `ReconcileRunner` drive
/// them, with Kafka, the issuer, the clock and the threads replaced by `SimWorld`'s events.
///
/// Not `Sendable` in fact: the simulation is single-threaded; `@unchecked` only because the
/// duplicate filter's wake-up closure is `@Sendable`.
final class SimWorker: @unchecked Sendable {
    let name: String
    /// The process identity written in fences and `started` markers (new on every start).
    let instance: String
    private unowned let world: SimWorld

    private var lifecycle = PartitionLifecycle()
    private let ledger = OffsetLedger()
    private let markerIndex = MarkerIndex()
    private let duplicates = DuplicateFilter(horizonMs: 600_000)
    private var fenceLogs: [Int32: FenceLog] = [:]
    private var epochs: [Int32: (generation: UInt64, epoch: Int64)] = [:]
    /// Calls waiting on a fencing verdict per markers partition (a released log is kept for them).
    private var confirming: [Int32: Int] = [:]
    /// The consumer's fetch position per partition, and which partitions are resumed in Kafka.
    private var positions: [Int32: Int64] = [:]
    private var flowing: Set<Int32> = []
    /// (partition, generation) whose catch-up finished: kept apart from the lifecycle, to check it.
    private var caughtUp: Set<[UInt64]> = []
    /// Whether the poll thread is blocked in a revoke's drain.
    private var draining = false
    private(set) var alive = true
    /// Records the gate refused (the metric).
    var refused: Int { lifecycle.refusedRecords }

    init(name: String, world: SimWorld) {
        self.name = name
        self.world = world
        instance = "\(name)-\(world.random.next() % 100_000)"
    }

    private var now: Int64 { world.nowMs }

    /// kill -9: every piece of state is gone; writes in flight may or may not have landed.
    func kill() {
        alive = false
        world.note("\(name) killed")
    }

    // MARK: - The poll thread

    /// Starts the poll and commit loops.
    func start() {
        world.events.after(world.random.int(1...20)) { [self] in pollTurn() }
        world.events.after(100) { [self] in commitTurn() }
    }

    private func apply(_ action: PartitionLifecycle.Action?) {
        switch action {
        case .pause(let partitions): for partition in partitions { flowing.remove(partition.partition) }
        case .resume(let partitions): for partition in partitions { flowing.insert(partition.partition) }
        case .rewind(let partition, let offset):
            flowing.remove(partition.partition)
            positions[partition.partition] = offset
        case nil: break
        }
    }

    private func pollTurn() {
        guard alive else { return }
        defer { world.events.after(world.random.int(5...30)) { [self] in pollTurn() } }
        guard !draining else { return }
        apply(lifecycle.turn(pending: ledger.unsettledCount(), limit: 40))
        for partition in lifecycle.assigned.map(\.partition).sorted() where flowing.contains(partition) {
            let log = world.cluster.requests[Int(partition)]
            var fetched = 0
            while fetched < 5, let position = positions[partition], position < Int64(log.count), flowing.contains(partition) {
                fetched += 1
                positions[partition] = position + 1
                let tp = SimCluster.topicPartition(partition)
                switch lifecycle.admit(tp, offset: position) {
                case .deliver:
                    receive(log[Int(position)], partition: partition, offset: position)
                case .refuse(let action):
                    apply(action)
                }
            }
        }
    }

    private func commitTurn() {
        guard alive else { return }
        world.events.after(100) { [self] in commitTurn() }
        guard !draining else { return }
        commit(nil)
    }

    /// Commits what may be committed (Kafka refuses a commit from a process no longer in the group).
    private func commit(_ partitions: [TopicPartition]?) {
        guard world.members.contains(name) else { return }
        let candidates = ledger.commitCandidates(partitions).sorted { $0.partition < $1.partition }
        guard !candidates.isEmpty else { return }
        for candidate in candidates { world.cluster.commit(candidate, by: name, nowMs: now) }
        ledger.committed(candidates)
    }

    // MARK: - Rebalances (RequestConsumer+Rebalance)

    /// The group assigned `partitions`.
    func assigned(_ partitions: [Int32]) {
        guard alive else { return }
        world.note("\(name) assigned \(partitions)")
        for partition in partitions {
            let tp = SimCluster.topicPartition(partition)
            let committed = world.cluster.committed[partition]
            let metadata = CommitMetadata(parsing: committed?.metadata)
            let generation = ledger.assign(tp, markerPosition: metadata.markers)
            apply(lifecycle.assigned(tp, generation: generation))
            markerIndex.expect(tp, generation: generation, committed: metadata)
            positions[partition] = committed?.offset ?? 0
            fence(partition, generation: generation, readFrom: metadata.markers)
        }
    }

    private func fence(_ partition: Int32, generation: UInt64, readFrom: Int64?) {
        let tp = SimCluster.topicPartition(partition)
        guard ledger.isOwned(tp, generation: generation) else { return }
        produceMarker(.fence(instance: instance), partition: partition) { [self] offset in
            guard let epoch = offset else {
                world.events.after(world.random.int(100...2_000)) { [self] in fence(partition, generation: generation, readFrom: readFrom) }
                return
            }
            if ledger.isOwned(tp, generation: generation) {
                if fenceLogs[partition] == nil { fenceLogs[partition] = FenceLog(fence: epoch) }
                epochs[partition] = (generation, epoch)
            }
            guard ledger.isOwned(tp, generation: generation), lifecycle.fenced(tp, generation: generation, epoch: epoch) else { return }
            catchUp(partition, generation: generation, from: readFrom)
        }
    }

    /// `MarkerCatchUp.read` then `readMarkers`' installation: retried while owned and unreadable.
    private func catchUp(_ partition: Int32, generation: UInt64, from position: Int64?) {
        let tp = SimCluster.topicPartition(partition)
        world.events.after(world.random.int(2...60)) { [self] in
            guard alive, ledger.isOwned(tp, generation: generation) else { return }
            guard world.cluster.readable(partition, nowMs: now) else {
                return world.events.after(200) { [self] in catchUp(partition, generation: generation, from: position) }
            }
            var found = InheritedMarkers()
            let log = world.cluster.markers[Int(partition)]
            for offset in Int(position ?? 0)..<log.count {
                switch log[offset] {
                case .fence(let writer): found.fences.append(.init(offset: Int64(offset), instance: writer))
                case .marker(let marker): found.add(marker, at: Int64(offset))
                }
            }
            guard markerIndex.install(tp, generation: generation, found: found, readFrom: position ?? 0) else { return }
            ledger.inherit(tp, markerOffsets: found.markerOffsets, generation: generation)
            if lifecycle.caughtUp(tp, generation: generation) {
                caughtUp.insert([UInt64(partition), generation])
                world.note("\(name) caught up p\(partition) gen \(generation) (markers \(found.states.count), fenced out \(found.fencedOut))")
            }
        }
    }

    /// A clean revoke: no new work, drain within `drainMs` (the poll thread blocked), commit, release.
    func revoke(_ partitions: [Int32], then done: @escaping () -> Void) {
        guard alive else { return done() }
        world.note("\(name) revoked \(partitions)")
        let tps = partitions.map(SimCluster.topicPartition)
        lifecycle.revoked(tps)
        ledger.revoke(tps)
        draining = true
        let deadline = now + world.settings.drainMs
        func wait() {
            guard alive else { return done() }
            if ledger.unsettledCount(tps) > 0 && now < deadline {
                return world.events.after(50) { wait() }
            }
            commit(tps)
            release(tps)
            draining = false
            done()
        }
        wait()
    }

    /// The assignment was lost (the session expired): nothing committed.
    func lost(_ partitions: [Int32]) {
        guard alive else { return }
        world.note("\(name) lost \(partitions)")
        let tps = partitions.map(SimCluster.topicPartition)
        lifecycle.revoked(tps)
        ledger.revoke(tps)
        release(tps)
    }

    /// Partitions the group still sees this worker holding (for an expelled worker: all it holds).
    var held: [Int32] { lifecycle.assigned.map(\.partition).sorted() }

    private func release(_ tps: [TopicPartition]) {
        ledger.release(tps)
        for tp in tps {
            epochs[tp.partition] = nil
            if (confirming[tp.partition] ?? 0) == 0 { fenceLogs[tp.partition] = nil }
        }
        markerIndex.remove(tps)
        lifecycle.released(tps)
        for tp in tps { flowing.remove(tp.partition) }
    }

    // MARK: - Intake (Intake.admit, the marker part)

    private func receive(_ request: SimRequest, partition: Int32, offset: Int64) {
        let tp = SimCluster.topicPartition(partition)
        guard let generation = ledger.track(tp, offset: offset) else { return }
        if !caughtUp.contains([UInt64(partition), generation]) {
            world.cluster.violation("\(name) handled \(request.id) (p\(partition)@\(offset)) before gen \(generation)'s catch-up", atMs: now)
        }
        intake(request, partition: partition, offset: offset, generation: generation)
    }

    private func intake(_ request: SimRequest, partition: Int32, offset: Int64, generation: UInt64) {
        guard alive else { return }
        let tp = SimCluster.topicPartition(partition)
        let job = Job(request: request, partition: partition, offset: offset, generation: generation)
        let verdict = duplicates.begin(RequestIdentity(program: "sim", requestID: request.id), owner: .init(partition: tp, generation: generation), nowMs: now) { [self] in
            world.events.after(1) { [self] in intake(request, partition: partition, offset: offset, generation: generation) }
        }
        if verdict == .awaitingOlderAttempt { return }
        let marker = markerIndex.state(RequestIdentity(program: "sim", requestID: request.id), replayOf: nil, in: tp)
        if verdict == .fresh, marker == .completed, !markerIndex.wasDone(offset, in: tp),
           let decided = markerIndex.decision(RequestIdentity(program: "sim", requestID: request.id), replayOf: nil, in: tp) {
            world.note("\(name) republishes the decision of \(request.id)")
            return publish(String(decoding: decided, as: UTF8.self), job: job, final: true) { [self] in settle(.decided, job) }
        }
        if verdict != .fresh || marker == .completed {
            return settle(.duplicate, job, claimed: verdict == .fresh)
        }
        if marker == .started { return recover(job) }
        startCall(job)
    }

    struct Job {
        let request: SimRequest
        let partition: Int32
        let offset: Int64
        let generation: UInt64
        var tp: TopicPartition { SimCluster.topicPartition(partition) }
        /// Where the call could start at the latest (EDF: publish-by less reserve and minimum budget).
        var lastStartMs: Int64 { request.deadlineMs - 2 * SimWorld.publishReserveMs - 500 }
    }

    // MARK: - The call (RequestFlow+Call)

    private func startCall(_ job: Job) {
        guard ledger.isOwned(job.tp, generation: job.generation), let held = epochs[job.partition], held.generation == job.generation else {
            return settle(.abandoned, job)
        }
        let epoch = held.epoch
        let started = CallMarker(requestID: job.request.id, program: "sim", state: .started, requestOffset: job.offset, atMs: now, worker: name,
                                 fence: epoch, instance: instance)
        writeMarker(started, job) { [self] offset in
            guard ledger.isHeld(job.tp, generation: job.generation) else { return settle(.abandoned, job) }
            guard let offset else {
                return publish("\(job.request.id):rejected:marker_not_written", job: job, final: true) { [self] in
                    settle(.answered(recovered: false, afterCall: false), job)
                }
            }
            confirm(job.partition, epoch: epoch, marker: offset, deadlineMs: job.lastStartMs) { [self] confirmation in
                switch confirmation {
                case .call:
                    guard ledger.isHeld(job.tp, generation: job.generation) else { return settle(.abandoned, job) }
                    call(job, startedAt: offset, epoch: epoch)
                case .fencedOut:
                    world.note("\(name) fenced out before calling for \(job.request.id)")
                    settle(.abandoned, job)
                case .unconfirmed:
                    guard ledger.isHeld(job.tp, generation: job.generation) else { return settle(.abandoned, job) }
                    publish("\(job.request.id):expired:ownership_unconfirmed", job: job, final: true) { [self] in
                        settle(.answered(recovered: false, afterCall: true), job)
                    }
                }
            }
        }
    }

    private func call(_ job: Job, startedAt: Int64, epoch: Int64) {
        let answer = world.issuer.call(job.request.id, random: &world.random)
        world.note("\(name) calls the issuer for \(job.request.id)")
        let roll = world.random.int(0...99)
        let duration = roll < 70 ? world.random.int(20...500) : roll < 95 ? world.random.int(500...4_000) : world.random.int(6_000...9_500)
        world.events.after(duration) { [self] in
            guard alive else { return }
            decideAsCaller("\(job.request.id):\(answer)", job: job, startedAt: startedAt, epoch: epoch)
        }
    }

    // MARK: - A final is decided once (FinalDecider)

    private func decideAsCaller(_ result: String, job: Job, startedAt: Int64, epoch: Int64) {
        let decision = CallMarker(requestID: job.request.id, program: "sim", state: .completed, requestOffset: job.offset, atMs: now, worker: name,
                                  outcome: .answered, result: Array(result.utf8))
        writeMarker(decision, job) { [self] offset in
            guard let offset else {
                world.note("\(name) decision for \(job.request.id) not written: published undecided")
                return publish(result, job: job, final: true) { [self] in settle(.answered(recovered: false, afterCall: true), job) }
            }
            confirm(job.partition, epoch: epoch, marker: offset, deadlineMs: max(job.request.deadlineMs, now + 1_000)) { [self] confirmation in
                let finish: (FinalDecider.Verdict) -> Void = { [self] verdict in
                    let chosen = if case .earlier(let bytes) = verdict { String(decoding: bytes, as: UTF8.self) } else { result }
                    if chosen != result { world.note("\(name) publishes an earlier decision for \(job.request.id)") }
                    publish(chosen, job: job, final: true) { [self] in settle(.decided, job) }
                }
                guard confirmation == .fencedOut else { return finish(.own) }
                lookUp(job.request.id, partition: job.partition, from: startedAt) { found in
                    let verdict = FinalDecider.Verdict(firstOf: found, own: offset)
                    finish(verdict == .unreadable ? .own : verdict)
                }
            }
        }
    }

    /// `MarkerCatchUp.lookUp`: one read of the markers partition from `from` to its end.
    private func lookUp(_ requestID: String, partition: Int32, from: Int64, completion: @escaping (MarkerCatchUp.LookUp) -> Void) {
        world.events.after(world.random.int(2...40)) { [self] in
            guard alive else { return }
            var found = MarkerCatchUp.LookUp()
            if world.cluster.readable(partition, nowMs: now) {
                let log = world.cluster.markers[Int(partition)]
                let key = CallMarker.key(RequestIdentity(program: "sim", requestID: requestID), replayOf: nil)
                for offset in Int(from)..<max(Int(from), log.count) {
                    if case .marker(let marker) = log[offset] { found.add(marker, at: Int64(offset), key: key) }
                }
            }
            completion(found)
        }
    }

    // MARK: - Zombie fencing (MarkerFencing.confirm over the real FenceLog)

    private func confirm(_ partition: Int32, epoch: Int64, marker: Int64, deadlineMs: Int64,
                         completion: @escaping (MarkerFencing.Confirmation) -> Void) {
        guard let log = fenceLogs[partition] else { return completion(.fencedOut) }
        switch log.verdict(epoch: epoch, marker: marker) {
        case .call: return completion(.call)
        case .fencedOut: return completion(.fencedOut)
        case .unknown: break
        }
        confirming[partition, default: 0] += 1
        func fill() {
            world.events.after(world.random.int(5...40)) { [self] in
                guard alive else { return }
                guard world.cluster.readable(partition, nowMs: now) else {
                    if now < deadlineMs { return fill() }
                    return done(.unconfirmed)
                }
                guard var log = fenceLogs[partition] else { return done(.fencedOut) }
                let records = world.cluster.markers[Int(partition)]
                var offset = log.known
                while offset < marker, offset < Int64(records.count) {
                    let foreign = if case .fence(let writer) = records[Int(offset)] { writer != instance } else { false }
                    log.read(at: offset, foreignFence: foreign)
                    offset += 1
                }
                fenceLogs[partition] = log
                switch log.verdict(epoch: epoch, marker: marker) {
                case .call: done(.call)
                case .fencedOut: done(.fencedOut)
                case .unknown: now < deadlineMs ? fill() : done(.unconfirmed)
                }
            }
        }
        func done(_ confirmation: MarkerFencing.Confirmation) {
            confirming[partition, default: 1] -= 1
            if epochs[partition] == nil, confirming[partition] == 0 { fenceLogs[partition] = nil }
            completion(confirmation)
        }
        fill()
    }

    // MARK: - Recovery and reconciliation (RequestFlow.recoverFromMarker, ReconcileRunner)

    private func recover(_ job: Job) {
        world.note("\(name) recovers \(job.request.id) from a started marker")
        let handOver = SimReconcileJob(requestID: job.request.id, partition: job.partition, requestOffset: job.offset,
                                       markersFrom: markerIndex.readFrom(job.tp) ?? 0)
        publish("\(job.request.id):indeterminate", job: job, final: false) { [self] in
            let due = max(now + 1_000, job.request.deadlineMs + SimWorld.publishReserveMs)
            world.enqueueReconcile(handOver, dueInMs: due - now)
            settle(.answered(recovered: true, afterCall: true), job)
        }
    }

    /// Runs a reconciliation job; `finished(true)` once it published or found the answer,
    /// `finished(false)` to have it run again later.
    func reconcile(_ job: SimReconcileJob, finished: @escaping (Bool) -> Void) {
        lookUp(job.requestID, partition: job.partition, from: job.markersFrom) { [self] found in
            if let decision = found.decision, !found.decisionPublished {
                return publishReconciled(String(decoding: decision.result, as: UTF8.self), job) { finished(true) }
            }
            if found.completion == .answered { return finished(true) }
            world.events.after(world.random.int(20...300)) { [self] in
                guard alive else { return }
                let outcome = world.issuer.state(of: job.requestID).map { "reconciled_applied:\($0)" } ?? "reconciled_not_applied"
                let result = "\(job.requestID):\(outcome)"
                let decision = CallMarker(requestID: job.requestID, program: "sim", state: .completed, requestOffset: job.requestOffset, atMs: now,
                                          worker: name, outcome: .answered, result: Array(result.utf8))
                produceMarker(.marker(decision), partition: job.partition) { [self] offset in
                    if let offset { fenceLogs[job.partition]?.ownWrite(at: offset) }
                    guard let offset else { return finished(false) }
                    lookUp(job.requestID, partition: job.partition, from: job.markersFrom) { [self] found in
                        switch FinalDecider.Verdict(firstOf: found, own: offset) {
                        case .own: publishReconciled(result, job) { finished(true) }
                        case .earlier(let bytes): publishReconciled(String(decoding: bytes, as: UTF8.self), job) { finished(true) }
                        case .undecided, .unreadable: finished(false)
                        }
                    }
                }
            }
        }
    }

    private func publishReconciled(_ result: String, _ job: SimReconcileJob, then: @escaping () -> Void) {
        world.events.after(world.produceDelayMs()) { [self] in
            let produced = world.produceOutcome(producerAlive: alive)
            if produced.written { world.cluster.publishFinal(result, for: job.requestID, nowMs: now) }
            guard alive else { return }
            produced.acknowledged ? then() : world.events.after(500) { [self] in publishReconciled(result, job, then: then) }
        }
    }

    // MARK: - Settlement (Settler)

    private func settle(_ exit: RecordExit, _ job: Job, claimed: Bool = true) {
        let settlement = Settlement(exit, claimed: claimed)
        func finish() {
            switch settlement.claim {
            case .finish: duplicates.finish(RequestIdentity(program: "sim", requestID: job.request.id), owner: .init(partition: job.tp, generation: job.generation), nowMs: now)
            case .release: duplicates.release(RequestIdentity(program: "sim", requestID: job.request.id), owner: .init(partition: job.tp, generation: job.generation))
            case .untouched: break
            }
            switch settlement.offset {
            case .complete: ledger.complete(job.tp, offset: job.offset, generation: job.generation)
            case .abandon: ledger.abandon(job.tp, offset: job.offset, generation: job.generation)
            }
        }
        guard let outcome = settlement.completedMarker else { return finish() }
        let marker = CallMarker(requestID: job.request.id, program: "sim", state: .completed, requestOffset: job.offset, atMs: now, worker: name,
                                outcome: outcome)
        guard settlement.awaitsMarker else {
            writeMarker(marker, job) { _ in }
            return finish()
        }
        writeMarker(marker, job) { _ in finish() }
    }

    // MARK: - Producing (MarkerWriter, OutputPublisher)

    /// `MarkerWriter.write`: the ledger and fencing are told of the write; `completion(nil)` when it failed.
    private func writeMarker(_ marker: CallMarker, _ job: Job, completion: @escaping (Int64?) -> Void) {
        ledger.markerWriting(job.tp, requestOffset: job.offset, generation: job.generation)
        produceMarker(.marker(marker), partition: job.partition) { [self] offset in
            ledger.markerWritten(job.tp, requestOffset: job.offset, markerOffset: offset, generation: job.generation)
            if let offset { fenceLogs[job.partition]?.ownWrite(at: offset) }
            completion(offset)
        }
    }

    /// A produce to markers partition `partition`: acknowledged with its offset, or failed (nil)
    /// — written or not, half each. A process killed meanwhile hears nothing (written or not).
    private func produceMarker(_ record: SimMarkerRecord, partition: Int32, completion: @escaping (Int64?) -> Void) {
        world.events.after(world.produceDelayMs()) { [self] in
            let produced = world.produceOutcome(producerAlive: alive)
            let offset = produced.written ? world.cluster.append(record, to: partition) : nil
            guard alive else { return }
            completion(produced.acknowledged ? offset : nil)
        }
    }

    /// Publishes a result for the job's request; `then` once acknowledged. A failed publish is
    /// retried while the partition is held; given up (abandoned) once it is not.
    private func publish(_ result: String, job: Job, final: Bool, then: @escaping () -> Void) {
        world.events.after(world.produceDelayMs()) { [self] in
            let produced = world.produceOutcome(producerAlive: alive)
            if produced.written && final { world.cluster.publishFinal(result, for: job.request.id, nowMs: now) }
            guard alive else { return }
            if produced.acknowledged { return then() }
            guard ledger.isHeld(job.tp, generation: job.generation) else { return settle(.abandoned, job) }
            world.events.after(200) { [self] in publish(result, job: job, final: final, then: then) }
        }
    }
}
