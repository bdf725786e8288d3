import CRdKafka
import Synchronization

extension KafkaConsumer {
    /// Callback context reachable from librdkafka's opaque pointer; lives as long as the consumer.
    final class Callbacks: Sendable {
        private struct Owner { weak var consumer: KafkaConsumer? }

        let listener: (any KafkaRebalanceListener)?
        let commitHandler: (@Sendable (Result<[TopicPartitionOffset], KafkaError>) -> Void)?
        let statistics: KafkaStatistics.Handler?
        private let owner = Mutex(Owner())
        private let pendingErrors = Mutex<[KafkaError]>([])
        /// Whether an assignment was ever handed over (the group's assignor state exists then).
        private let assignedOnce = Atomic<Bool>(false)
        /// Whether the listener is no longer told (a shutdown serving the queue for its own ends).
        private let silenced = Atomic<Bool>(false)
        /// Whether the consumer is closing: a revoke is completed when its callback returns.
        private let closing = Atomic<Bool>(false)
        /// A revoke the listener deferred: its partitions and protocol, until `completeRevoke`.
        private let deferred = Mutex<(partitions: [TopicPartition], cooperative: Bool)?>(nil)

        init(listener: (any KafkaRebalanceListener)?,
             commitHandler: (@Sendable (Result<[TopicPartitionOffset], KafkaError>) -> Void)?,
             statistics: KafkaStatistics.Handler?) {
            self.listener = listener
            self.commitHandler = commitHandler
            self.statistics = statistics
        }

        /// Links the consumer once it is fully initialized (weakly: nil again while it deinitializes).
        func attach(_ consumer: KafkaConsumer) {
            owner.withLock { $0.consumer = consumer }
        }

        var consumer: KafkaConsumer? {
            owner.withLock { $0.consumer }
        }

        /// Whether an assignment was ever handed over by a rebalance.
        var hasBeenAssigned: Bool { assignedOnce.load(ordering: .acquiring) }

        func markAssigned() { assignedOnce.store(true, ordering: .releasing) }

        /// Rebalances from now on are carried out without telling the listener.
        func silence() { silenced.store(true, ordering: .releasing) }

        var isSilenced: Bool { silenced.load(ordering: .acquiring) }

        /// From now on revokes are completed at once (the consumer is closing).
        func markClosing() { closing.store(true, ordering: .releasing) }

        var isClosing: Bool { closing.load(ordering: .acquiring) }

        /// Keeps a revoke the listener deferred (one at a time: librdkafka starts no other
        /// rebalance before its unassign call).
        func deferRevoke(_ partitions: [TopicPartition], cooperative: Bool) {
            deferred.withLock { $0 = (partitions, cooperative) }
        }

        /// Takes the deferred revoke, if any.
        func takeDeferredRevoke() -> (partitions: [TopicPartition], cooperative: Bool)? {
            deferred.withLock { pending in
                defer { pending = nil }
                return pending
            }
        }

        /// Keeps an error raised inside a callback for the next `poll` to return.
        func record(_ error: KafkaError) {
            pendingErrors.withLock { $0.append(error) }
        }

        func takeErrors() -> [KafkaError] {
            pendingErrors.withLock { errors in
                defer { errors.removeAll() }
                return errors
            }
        }
    }
}

/// librdkafka's `rebalance_cb`: runs inside `rd_kafka_consumer_poll` / `rd_kafka_consumer_close`,
/// on the thread that called them.
func kafkaConsumerRebalance(_ handle: OpaquePointer?, _ code: rd_kafka_resp_err_t,
                            _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
                            _ opaque: UnsafeMutableRawPointer?) {
    guard let handle, let opaque else { return }
    let callbacks = Unmanaged<KafkaConsumer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    let consumer = callbacks.consumer
    let listener = consumer == nil || callbacks.isSilenced ? nil : callbacks.listener
    let isCooperative = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) } == "COOPERATIVE"
    let list = TopicPartitionList.partitions(partitions)

    switch code {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
        if isCooperative {
            if let error = rd_kafka_incremental_assign(handle, partitions) {
                callbacks.record(.consuming(error, context: "incremental assign of \(list)"))
            }
        } else {
            let error = rd_kafka_assign(handle, partitions)
            if error != RD_KAFKA_RESP_ERR_NO_ERROR {
                callbacks.record(.fromLibrary(error, context: "assign of \(list)"))
            }
        }
        callbacks.markAssigned()
        if let consumer, let listener, !list.isEmpty {
            listener.partitionsAssigned(list, by: consumer)
        }

    case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
        // Tell the listener first, while the partitions are still assigned, so it can commit.
        var completion = KafkaRevokeCompletion.now
        if let consumer, let listener, !list.isEmpty {
            if rd_kafka_assignment_lost(handle) != 0 {
                listener.partitionsLost(list, by: consumer)
            } else {
                completion = listener.partitionsRevoked(list, by: consumer)
            }
        }
        // Inside `close` nothing is deferred: librdkafka waits for this unassign to leave the group.
        if completion == .deferred && !callbacks.isClosing {
            callbacks.deferRevoke(list, cooperative: isCooperative)
        } else {
            unassign(handle, partitions, cooperative: isCooperative, callbacks: callbacks)
        }

    default:
        callbacks.record(.fromLibrary(code, context: "rebalance failed"))
        _ = rd_kafka_assign(handle, nil)
    }
}

/// Gives up revoked partitions: `incremental_unassign` under the cooperative protocol, the whole
/// assignment cleared under the eager one (librdkafka's "unassign call" the group waits for).
func unassign(_ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, cooperative: Bool,
              callbacks: KafkaConsumer.Callbacks) {
    if cooperative {
        if let error = rd_kafka_incremental_unassign(handle, partitions) {
            callbacks.record(.consuming(error, context: "incremental unassign of \(TopicPartitionList.partitions(partitions))"))
        }
    } else {
        _ = rd_kafka_assign(handle, nil)
    }
}

/// The commit callback of asynchronous commits (`rd_kafka_commit_queue` on the consumer queue): runs
/// inside `poll`; `opaque` is the consumer's `Callbacks`.
func kafkaConsumerCommitted(_ handle: OpaquePointer?, _ code: rd_kafka_resp_err_t,
                            _ offsets: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
                            _ opaque: UnsafeMutableRawPointer?) {
    guard let opaque else { return }
    let callbacks = Unmanaged<KafkaConsumer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    guard let handler = callbacks.commitHandler else { return }
    if code != RD_KAFKA_RESP_ERR_NO_ERROR {
        handler(.failure(.fromLibrary(code, context: "commit failed")))
    } else if let error = TopicPartitionList.firstError(offsets, operation: "commit of") {
        handler(.failure(error))
    } else {
        handler(.success(TopicPartitionList.offsets(offsets)))
    }
}
