import CRdKafka
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reads records as a member of a consumer group (`subscribe`) or from chosen partitions (`assign`).
///
/// Defaults are `enable.auto.commit=false` and `enable.auto.offset.store=false`: the application
/// commits what it finished, explicitly. Any property in `configuration` overrides them.
///
/// Threading: every method may be called from any thread. Rebalance listener calls and commit
/// results run inside `poll` (and inside `close`), on the thread that called it. Keep polling while
/// busy (pause partitions for backpressure): a member that does not poll within
/// `max.poll.interval.ms` is removed from its group.
public final class KafkaConsumer: @unchecked Sendable {
    // @unchecked Sendable: the only mutable state is behind `gate`, `polls` and `callbacks` (Mutexes)
    // and the librdkafka handle, which librdkafka documents as safe to use from any thread. The handle is
    // destroyed only after `gate` has seen every running call finish.

    /// The properties applied unless the caller sets them.
    public static let defaultConfiguration: [String: String] = [
        "enable.auto.commit": "false",
        "enable.auto.offset.store": "false",
    ]

    let handle: OpaquePointer
    let gate = KafkaClientGate()
    private let callbacks: Callbacks
    /// The bounds every record is held to before it is copied (nil: none).
    let recordLimits: KafkaRecordLimits?
    /// Whether `partition.assignment.strategy` is `cooperative-sticky` (librdkafka#4312).
    private let cooperativeSticky: Bool
    /// Whether `subscribe` succeeded: the consumer joins a group.
    private let subscribed = Atomic<Bool>(false)

    /// Threads inside `poll`, and whether one of them asked to close from a callback.
    private struct Polls {
        var threads: [pthread_t] = []
        var closeWhenPollReturns = false
    }
    private let polls = Mutex(Polls())

    /// Creates a consumer. `rebalanceListener` hears about assigned, revoked and lost partitions;
    /// `commitHandler`, when given, receives the outcome of each commit made with
    /// `synchronously: false`, inside `poll` (automatic commits are not reported); `statistics`
    /// receives each statistics report (every `statistics.interval.ms`, when that property is above
    /// 0), inside `poll` too. With `recordLimits`, a record over them is delivered as its sizes and
    /// digest only (`KafkaMessage.oversize`). Throws `.invalidArgument` for a bad property.
    public init(configuration: [String: String],
                rebalanceListener: (any KafkaRebalanceListener)?,
                commitHandler: (@Sendable (Result<[TopicPartitionOffset], KafkaError>) -> Void)? = nil,
                statistics: KafkaStatistics.Handler? = nil,
                recordLimits: KafkaRecordLimits? = nil) throws(KafkaError) {
        self.recordLimits = recordLimits
        let properties = KafkaConfiguration.merged(defaults: Self.defaultConfiguration, overrides: configuration)
        cooperativeSticky = properties["partition.assignment.strategy"]?.contains("cooperative-sticky") ?? false
        let conf = try KafkaConfiguration.make(properties)
        let callbacks = Callbacks(listener: rebalanceListener, commitHandler: commitHandler, statistics: statistics)
        rd_kafka_conf_set_rebalance_cb(conf, kafkaConsumerRebalance)
        if statistics != nil { rd_kafka_conf_set_stats_cb(conf, kafkaConsumerStatistics) }
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(callbacks).toOpaque())
        self.handle = try KafkaConfiguration.makeHandle(type: RD_KAFKA_CONSUMER, conf: conf, role: "consumer")
        self.callbacks = callbacks
        // Route client events (errors, rebalances) to the queue `poll` serves.
        rd_kafka_poll_set_consumer(handle)
        callbacks.attach(self)
    }

    deinit {
        shutDown()
    }

    /// Joins the group (`group.id`) and consumes `topics`; partitions arrive through rebalances
    /// served by `poll`.
    public func subscribe(_ topics: [String]) throws(KafkaError) {
        try call { () throws(KafkaError) in
            let list = TopicPartitionList.make(topics.map { TopicPartition(topic: $0, partition: RD_KAFKA_PARTITION_UA) })
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let error = rd_kafka_subscribe(handle, list)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError.fromLibrary(error, context: "subscribing to \(topics) failed; is group.id set?")
            }
        }
        subscribed.store(true, ordering: .releasing)
    }

    /// Reads exactly these partitions from these offsets, without group management (tools, replay).
    /// Offsets may be logical (`TopicPartitionOffset.beginning`, `.end`, `.stored`; librdkafka 2.0.2
    /// resolves those after an offset query that can take about 500 ms) or concrete (fetching starts
    /// at once). An empty list clears the assignment.
    public func assign(_ partitions: [TopicPartitionOffset]) throws(KafkaError) {
        try call { () throws(KafkaError) in
            let list = TopicPartitionList.make(partitions)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let error = rd_kafka_assign(handle, partitions.isEmpty ? nil : list)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError.fromLibrary(error, context: "assigning \(partitions) failed")
            }
        }
    }

    /// Returns up to `maxMessages` records and consumer errors, waiting up to `timeoutMs` for the
    /// first one (then taking only what is already fetched).
    ///
    /// Blocks up to timeoutMs; rebalance callbacks run inside this call, on the caller's thread.
    /// After `close` it returns a single `.destroyed` failure.
    public func poll(maxMessages: Int, timeoutMs: Int32) -> [Result<KafkaMessage, KafkaError>] {
        guard gate.enter(.long) else { return [.failure(KafkaError.closed("consumer"))] }
        let thread = pthread_self()
        polls.withLock { $0.threads.append(thread) }
        defer {
            let closeNow = polls.withLock { polls in
                polls.threads.removeAll { pthread_equal($0, thread) != 0 }
                defer { polls.closeWhenPollReturns = false }
                return polls.closeWhenPollReturns
            }
            gate.leave(.long)
            if closeNow { shutDown() }
        }
        var results: [Result<KafkaMessage, KafkaError>] = callbacks.takeErrors().map { .failure($0) }
        var timeout = results.isEmpty ? timeoutMs : 0
        let limit = max(maxMessages, 1)
        var received = 0
        while received < limit, let message = rd_kafka_consumer_poll(handle, timeout) {
            timeout = 0
            results.append(KafkaMessage.from(message, limits: recordLimits))
            rd_kafka_message_destroy(message)
            received += 1
        }
        results.append(contentsOf: callbacks.takeErrors().map { .failure($0) })
        return results
    }

    /// Stops fetching from `partitions` (already fetched records of them are dropped and fetched
    /// again after `resume`). Partitions not assigned are ignored; with the eager protocol a
    /// rebalance assigns partitions unpaused again.
    public func pause(_ partitions: [TopicPartition]) {
        _ = try? call { () throws(KafkaError) in
            let list = TopicPartitionList.make(partitions)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            _ = rd_kafka_pause_partitions(handle, list)
        }
    }

    /// Restarts fetching from paused `partitions`, at the position of the next record to return.
    public func resume(_ partitions: [TopicPartition]) {
        _ = try? call { () throws(KafkaError) in
            let list = TopicPartitionList.make(partitions)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            _ = rd_kafka_resume_partitions(handle, list)
        }
    }

    /// The partitions currently assigned to this consumer.
    public func assignment() -> [TopicPartition] {
        (try? call { () throws(KafkaError) -> [TopicPartition] in
            var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
            guard rd_kafka_assignment(handle, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
            defer { rd_kafka_topic_partition_list_destroy(list) }
            return TopicPartitionList.partitions(list)
        }) ?? []
    }

    /// The group's rebalance protocol: `"EAGER"`, `"COOPERATIVE"`, or `"NONE"` (no group joined yet).
    public var rebalanceProtocol: String {
        (try? call { () throws(KafkaError) -> String in
            rd_kafka_rebalance_protocol(handle).map { String(cString: $0) } ?? "NONE"
        }) ?? "NONE"
    }

    /// The number of partitions of `topic`, from cluster metadata (never creates the topic).
    public func partitionCount(topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        try call { () throws(KafkaError) -> Int in
            try KafkaMetadata.partitionCount(handle: handle, topic: topic, timeoutMs: timeoutMs)
        }
    }

    /// Leaves the group cleanly (the listener hears `partitionsRevoked` first, on this thread, and may
    /// still commit), then destroys the client. Waits for a running `poll` to return. Idempotent.
    /// Called from a rebalance listener or commit handler, it takes effect when that `poll` returns.
    public func close() {
        let calledInsidePoll = polls.withLock { polls in
            let inside = polls.threads.contains { pthread_equal($0, pthread_self()) != 0 }
            if inside { polls.closeWhenPollReturns = true }
            return inside
        }
        if !calledInsidePoll {
            shutDown()
        }
    }

    /// Gives up the partitions of the revoke the listener deferred (`KafkaRevokeCompletion`):
    /// librdkafka's unassign call, after which the group's rebalance goes on. Call it on the poll
    /// thread, once their work is drained and committed. Nothing happens when none is deferred.
    public func completeRevoke() {
        guard let pending = callbacks.takeDeferredRevoke() else { return }
        _ = try? call { () throws(KafkaError) in
            let list = TopicPartitionList.make(pending.partitions)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            unassign(handle, list, cooperative: pending.cooperative, callbacks: callbacks)
        }
    }

    private func shutDown() {
        callbacks.markClosing()
        // A revoke still deferred is completed first: librdkafka's close waits for it.
        completeRevoke()
        guard gate.beginDraining() else { return }
        let destroyable = awaitAssignorState()
        _ = rd_kafka_consumer_close(handle)
        gate.close()
        guard destroyable else {
            // Destroying it now would abort the process (librdkafka#4312): the client is left to
            // the process's exit, its callbacks kept alive for it.
            _ = Unmanaged.passRetained(callbacks)
            return
        }
        rd_kafka_destroy_flags(handle, Int32(RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE))
    }

    /// Below librdkafka 2.3.0 a `cooperative-sticky` member that has joined its group (or is
    /// joining: `mayAbortOnDestroy`) but not yet received its first assignment has no assignor
    /// state, and destroying it aborts the process (confluentinc/librdkafka#4312, fixed by #4381).
    /// Such a member serves its queue (the listener
    /// no longer told, records dropped: nothing was handed out yet) until that assignment arrives,
    /// for at most `assignorStateWaitMs`. False when it did not: the handle must not be destroyed.
    private func awaitAssignorState() -> Bool {
        guard mayAbortOnDestroy() else { return true }
        callbacks.silence()
        var waitedMs = 0
        while !callbacks.hasBeenAssigned && waitedMs < Self.assignorStateWaitMs {
            if let message = rd_kafka_consumer_poll(handle, 50) { rd_kafka_message_destroy(message) }
            waitedMs += 50
        }
        return callbacks.hasBeenAssigned
    }

    /// Whether destroying the client could abort the process (librdkafka#4312, below 2.3.0): a
    /// `cooperative-sticky` member never assigned that has joined its group (the protocol is
    /// chosen) or may be joining (subscribed, the protocol not chosen yet): a JoinGroup answered
    /// during the close chooses it then, and the protocol cannot be read after the close.
    private func mayAbortOnDestroy() -> Bool {
        guard KafkaRuntime.hasStickyDestroyDefect, !callbacks.hasBeenAssigned else { return false }
        let chosen = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) }
        return chosen == "COOPERATIVE" || (chosen == "NONE" && cooperativeSticky && subscribed.load(ordering: .acquiring))
    }

    /// How long a shutdown waits for the first assignment on a runtime with librdkafka#4312.
    static let assignorStateWaitMs = 5_000

    var hasCommitHandler: Bool { callbacks.commitHandler != nil }

    /// The opaque pointer librdkafka hands back to the callbacks (valid while the consumer lives).
    var callbacksPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(callbacks).toOpaque() }

    /// Runs a short call against the handle, or throws `.destroyed` after `close`.
    func call<T>(_ body: () throws(KafkaError) -> T) throws(KafkaError) -> T {
        guard let result = try gate.withCall(.short, body) else { throw KafkaError.closed("consumer") }
        return result
    }
}
