import CRdKafka

extension KafkaConsumer {
    /// Commits `offsets` (each the next offset to read, with optional metadata) for the group.
    ///
    /// Synchronously: waits for the coordinator, without a bound (a coordinator that stops
    /// answering blocks the caller until librdkafka gives up), and throws its error; a poll thread
    /// uses `commit(_:timeoutMs:)` instead. Asynchronously: returns at once;
    /// the outcome goes to the `commitHandler` given at init (if any), inside a later `poll`.
    /// A commit for partitions this member no longer owns fails with an error whose
    /// `meansPartitionNotOwned` is true (`.illegalGeneration`, `.unknownMemberID`,
    /// `.rebalanceInProgress`, `.state`): the work belongs to another member now, drop it.
    public func commit(_ offsets: [TopicPartitionOffset], synchronously: Bool) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        try call { () throws(KafkaError) in
            let list = TopicPartitionList.make(offsets)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let error: rd_kafka_resp_err_t
            if synchronously || !hasCommitHandler {
                error = rd_kafka_commit(handle, list, synchronously ? 0 : 1)
            } else {
                // The result goes to the consumer queue, where `poll` hands it to the commit handler.
                let queue = rd_kafka_queue_get_consumer(handle)
                defer { rd_kafka_queue_destroy(queue) }
                error = rd_kafka_commit_queue(handle, list, queue, kafkaConsumerCommitted, callbacksPointer)
            }
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw Self.ownershipAware(.fromLibrary(error, context: "committing \(offsets) failed"))
            }
        }
    }

    /// Commits `offsets` for the group and waits at most `timeoutMs` for the coordinator's answer,
    /// throwing its error (or a partition's), as `commit(_:synchronously: true)` but bounded.
    ///
    /// Without an answer in time it throws `.timedOut`: nothing is known to be committed, and the
    /// commit may still land later (librdkafka keeps the request). The answer goes to a queue of
    /// this call's own (`rd_kafka_commit_queue`), never to the consumer queue or the commit handler.
    public func commit(_ offsets: [TopicPartitionOffset], timeoutMs: Int32) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        try call { () throws(KafkaError) in
            let list = TopicPartitionList.make(offsets)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            guard let queue = rd_kafka_queue_new(handle) else {
                throw KafkaError(code: .fail, message: "committing \(offsets.count) offsets failed: librdkafka could not make a queue for the answer")
            }
            // Destroying the queue before the answer came is safe: the request holds a reference of
            // its own on it, and an answer that arrives after finds it disabled and is dropped.
            defer { rd_kafka_queue_destroy(queue) }
            let error = rd_kafka_commit_queue(handle, list, queue, nil, nil)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw Self.ownershipAware(.fromLibrary(error, context: "committing \(offsets) failed"))
            }
            let deadline = ContinuousClock.now.advanced(by: .milliseconds(max(0, timeoutMs)))
            while true {
                let left = ContinuousClock.now.duration(to: deadline).components
                let leftMs = Int32(clamping: max(0, left.seconds * 1_000 + left.attoseconds / 1_000_000_000_000_000))
                guard let event = rd_kafka_queue_poll(queue, leftMs) else {
                    guard ContinuousClock.now < deadline else { throw Self.commitTimedOut(offsets, timeoutMs: timeoutMs) }
                    continue
                }
                defer { rd_kafka_event_destroy(event) }
                guard rd_kafka_event_type(event) == RD_KAFKA_EVENT_OFFSET_COMMIT else { continue }
                let error = rd_kafka_event_error(event)
                guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    throw Self.ownershipAware(.fromLibrary(error, context: "committing \(offsets) failed"))
                }
                if let failure = TopicPartitionList.firstError(rd_kafka_event_topic_partition_list(event), operation: "committing the offset of") {
                    throw Self.ownershipAware(failure)
                }
                return
            }
        }
    }

    private static func commitTimedOut(_ offsets: [TopicPartitionOffset], timeoutMs: Int32) -> KafkaError {
        let partitions = offsets.map { "\($0.topic)[\($0.partition)]" }.joined(separator: ", ")
        return KafkaError(code: .timedOut,
                          message: "the group coordinator did not answer a commit of \(partitions) within \(timeoutMs) ms: nothing is known to be committed "
                              + "(the commit may still land); the partitions' next owner redoes what is uncommitted. Check that the brokers are reachable",
                          isRetriable: true)
    }

    /// Stores offsets for the auto-committer (only with `enable.auto.commit=true` and
    /// `enable.auto.offset.store=false`). A partition no longer assigned fails with `.state`.
    public func store(_ offsets: [TopicPartitionOffset]) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        try call { () throws(KafkaError) in
            let list = TopicPartitionList.make(offsets)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let error = rd_kafka_offsets_store(handle, list)
            if let failure = TopicPartitionList.firstError(list, operation: "storing the offset of") {
                throw Self.ownershipAware(failure)
            }
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw Self.ownershipAware(.fromLibrary(error, context: "storing \(offsets) failed"))
            }
        }
    }

    /// The group's committed offsets (and commit metadata) for `partitions`; the offset is
    /// `TopicPartitionOffset.invalid` where nothing was committed.
    public func committed(_ partitions: [TopicPartition], timeoutMs: Int32) throws(KafkaError) -> [TopicPartitionOffset] {
        try call { () throws(KafkaError) -> [TopicPartitionOffset] in
            let list = TopicPartitionList.make(partitions)
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let error = rd_kafka_committed(handle, list, timeoutMs)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError.fromLibrary(error, context: "reading committed offsets of \(partitions) within \(timeoutMs) ms failed")
            }
            if let failure = TopicPartitionList.firstError(list, operation: "reading the committed offset of") {
                throw failure
            }
            return TopicPartitionList.offsets(list)
        }
    }

    /// Moves the fetch position of an assigned partition; the next `poll` returns records from
    /// `offset` (or a logical offset such as `TopicPartitionOffset.beginning`).
    public func seek(_ partition: TopicPartition, to offset: Int64, timeoutMs: Int32) throws(KafkaError) {
        try call { () throws(KafkaError) in
            let list = TopicPartitionList.make([TopicPartitionOffset(partition, offset: offset)])
            defer { rd_kafka_topic_partition_list_destroy(list) }
            if let error = rd_kafka_seek_partitions(handle, list, timeoutMs) {
                throw KafkaError.consuming(error, context: "seeking \(partition) to \(offset) failed")
            }
            // An asynchronous seek (timeout 0) reports `__IN_PROGRESS` per partition: started, not failed.
            if let failure = TopicPartitionList.firstError(list, operation: "seeking"),
               !(timeoutMs == 0 && failure.code == .inProgress) {
                throw failure
            }
        }
    }

    /// The low (first) and high (next to be written) offsets of `partition`, asked of its leader.
    public func watermarks(_ partition: TopicPartition, timeoutMs: Int32) throws(KafkaError) -> (low: Int64, high: Int64) {
        try call { () throws(KafkaError) -> (low: Int64, high: Int64) in
            var low: Int64 = 0
            var high: Int64 = 0
            let error = rd_kafka_query_watermark_offsets(handle, partition.topic, partition.partition, &low, &high, timeoutMs)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError.fromLibrary(error, context: "querying the watermarks of \(partition) within \(timeoutMs) ms failed")
            }
            return (low, high)
        }
    }

    /// The earliest offset of `partition` whose record timestamp is at or after `timestampMs`
    /// (librdkafka `rd_kafka_offsets_for_times`, asked of the leader), or nil when no record is
    /// that recent (every record is older: start at the end).
    public func offset(_ partition: TopicPartition, atOrAfterTimestampMs timestampMs: Int64, timeoutMs: Int32) throws(KafkaError) -> Int64? {
        try call { () throws(KafkaError) -> Int64? in
            let list = TopicPartitionList.make([TopicPartitionOffset(partition, offset: timestampMs)])
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let error = rd_kafka_offsets_for_times(handle, list, timeoutMs)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError.fromLibrary(error, context: "looking up the offset of \(partition) at time \(timestampMs) within \(timeoutMs) ms failed")
            }
            if let failure = TopicPartitionList.firstError(list, operation: "looking up an offset by time of") {
                throw failure
            }
            guard let offset = TopicPartitionList.offsets(list).first?.offset, offset >= 0 else { return nil }
            return offset
        }
    }

    private static func ownershipAware(_ error: KafkaError) -> KafkaError {
        guard error.meansPartitionNotOwned else { return error }
        var error = error
        error.message += "; this consumer no longer owns the partition (revoked or the group rebalanced): drop the work, another member will redo it"
        return error
    }
}

extension KafkaConsumer {
    /// Gives an assigned `partition` up and takes it again at `offset`, in this member only (the
    /// group still counts it as this member's; no rebalance, no listener call): librdkafka stops the
    /// partition's fetcher, drops its pause state and pending operations, and starts a new fetcher
    /// at `offset`, then the partition is resumed. For a fetcher that a resume and a seek did not
    /// restart. Only under the cooperative protocol, whose incremental assignment leaves the other
    /// partitions alone: false (nothing done) under the eager one or before a group was joined.
    public func refetch(_ partition: TopicPartition, from offset: Int64) throws(KafkaError) -> Bool {
        try call { () throws(KafkaError) -> Bool in
            guard rd_kafka_rebalance_protocol(handle).map({ String(cString: $0) }) == "COOPERATIVE" else { return false }
            let list = TopicPartitionList.make([TopicPartitionOffset(partition, offset: offset)])
            defer { rd_kafka_topic_partition_list_destroy(list) }
            if let error = rd_kafka_incremental_unassign(handle, list) {
                throw KafkaError.consuming(error, context: "giving up \(partition) to fetch it again")
            }
            if let error = rd_kafka_incremental_assign(handle, list) {
                throw KafkaError.consuming(error, context: "taking \(partition) again at \(offset)")
            }
            _ = rd_kafka_resume_partitions(handle, list)
            return true
        }
    }
}
