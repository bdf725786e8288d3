import CRdKafka

extension KafkaError {
    /// An extensible error code: librdkafka's `rd_kafka_resp_err_t` value.
    ///
    /// Negative values are local (raised by librdkafka itself), positive values come from brokers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The `rd_kafka_resp_err_t` value.
        public var rawValue: Int32

        /// Wraps a raw `rd_kafka_resp_err_t` value.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        init(_ raw: rd_kafka_resp_err_t) { self.rawValue = raw.rawValue }

        var raw: rd_kafka_resp_err_t { rd_kafka_resp_err_t(rawValue: rawValue) }

        /// librdkafka's symbolic name without the prefix (`_QUEUE_FULL`, `NOT_LEADER_FOR_PARTITION`).
        public var name: String { String(cString: rd_kafka_err2name(raw)) }

        /// The name, for logs.
        public var description: String { name }

        var libraryDescription: String { String(cString: rd_kafka_err2str(raw)) }

        /// No error.
        public static let noError = Code(RD_KAFKA_RESP_ERR_NO_ERROR)

        // MARK: Local errors (raised by librdkafka)

        /// The local producer queue is full (`queue.buffering.max.messages` / `.kbytes`): slow down.
        public static let queueFull = Code(RD_KAFKA_RESP_ERR__QUEUE_FULL)
        /// The message was not acknowledged within `message.timeout.ms`.
        public static let messageTimedOut = Code(RD_KAFKA_RESP_ERR__MSG_TIMED_OUT)
        /// The operation is not valid in the current state (for example a partition no longer assigned).
        public static let state = Code(RD_KAFKA_RESP_ERR__STATE)
        /// A local operation timed out.
        public static let timedOut = Code(RD_KAFKA_RESP_ERR__TIMED_OUT)
        /// The group's coordinator is not known yet (after it went away, until it is found again).
        public static let waitingForCoordinator = Code(RD_KAFKA_RESP_ERR__WAIT_COORD)
        /// An asynchronous operation was started and has not ended yet (an asynchronous seek's per-partition result).
        public static let inProgress = Code(RD_KAFKA_RESP_ERR__IN_PROGRESS)
        /// No broker of the cluster can be reached.
        public static let allBrokersDown = Code(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        /// A broker connection failed.
        public static let transport = Code(RD_KAFKA_RESP_ERR__TRANSPORT)
        /// The client instance was closed or destroyed.
        public static let destroyed = Code(RD_KAFKA_RESP_ERR__DESTROY)
        /// A generic local failure.
        public static let fail = Code(RD_KAFKA_RESP_ERR__FAIL)
        /// The topic is not known to the cluster (local check).
        public static let unknownTopic = Code(RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC)
        /// The partition does not exist in the topic (local check).
        public static let unknownPartition = Code(RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION)
        /// The consumer reached the end of a partition (only with `enable.partition.eof=true`).
        public static let partitionEOF = Code(RD_KAFKA_RESP_ERR__PARTITION_EOF)
        /// An argument was invalid (a configuration property, a partition number).
        public static let invalidArgument = Code(RD_KAFKA_RESP_ERR__INVALID_ARG)
        /// The instance raised a fatal error (idempotence guarantees could not be kept): recreate it.
        public static let fatal = Code(RD_KAFKA_RESP_ERR__FATAL)
        /// The feature is not implemented by librdkafka or the broker.
        public static let notImplemented = Code(RD_KAFKA_RESP_ERR__NOT_IMPLEMENTED)
        /// The broker does not support the request.
        public static let unsupportedFeature = Code(RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE)
        /// The message was purged from the local queue before it was sent (close or purge).
        public static let purgedFromQueue = Code(RD_KAFKA_RESP_ERR__PURGE_QUEUE)
        /// The message was purged while in flight (close or purge); it may or may not have been written.
        public static let purgedInFlight = Code(RD_KAFKA_RESP_ERR__PURGE_INFLIGHT)
        /// The consumer lost its partitions without a clean revoke (session timed out).
        public static let assignmentLost = Code(RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST)
        /// The application did not poll within `max.poll.interval.ms` and left the group.
        public static let maxPollExceeded = Code(RD_KAFKA_RESP_ERR__MAX_POLL_EXCEEDED)
        /// No offset is stored or committed for the partition.
        public static let noOffset = Code(RD_KAFKA_RESP_ERR__NO_OFFSET)
        /// The consumer position was reset by `auto.offset.reset`.
        public static let autoOffsetReset = Code(RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET)
        /// The message or record could not be parsed.
        public static let badMessage = Code(RD_KAFKA_RESP_ERR__BAD_MSG)

        // MARK: Broker errors

        /// An unexpected server error.
        public static let unknownServerError = Code(RD_KAFKA_RESP_ERR_UNKNOWN)
        /// The requested offset is outside the partition's log.
        public static let offsetOutOfRange = Code(RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE)
        /// The message failed its CRC check or is otherwise corrupt.
        public static let corruptMessage = Code(RD_KAFKA_RESP_ERR_INVALID_MSG)
        /// The topic or partition does not exist on the broker.
        public static let unknownTopicOrPartition = Code(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        /// The partition has no leader right now (election in progress).
        public static let leaderNotAvailable = Code(RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
        /// The broker is not the partition leader (metadata is stale).
        public static let notLeaderForPartition = Code(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
        /// The broker did not finish the request in time.
        public static let requestTimedOut = Code(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
        /// The message is larger than the broker or topic accepts.
        public static let messageSizeTooLarge = Code(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE)
        /// The commit metadata string is larger than the broker accepts.
        public static let offsetMetadataTooLarge = Code(RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE)
        /// A network error on the broker side.
        public static let networkException = Code(RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION)
        /// The group coordinator is loading offsets.
        public static let coordinatorLoadInProgress = Code(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
        /// The group coordinator is not available.
        public static let coordinatorNotAvailable = Code(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE)
        /// The broker is not the group coordinator.
        public static let notCoordinator = Code(RD_KAFKA_RESP_ERR_NOT_COORDINATOR)
        /// Fewer in-sync replicas than `min.insync.replicas`.
        public static let notEnoughReplicas = Code(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS)
        /// Written, but fewer in-sync replicas than `min.insync.replicas` acknowledged it.
        public static let notEnoughReplicasAfterAppend = Code(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND)
        /// The consumer group moved to a newer generation: this member's view is stale.
        public static let illegalGeneration = Code(RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION)
        /// The coordinator does not know this member (it was removed from the group).
        public static let unknownMemberID = Code(RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID)
        /// The group is rebalancing.
        public static let rebalanceInProgress = Code(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
        /// The member's `session.timeout.ms` is outside the broker's `group.min.session.timeout.ms`
        /// to `group.max.session.timeout.ms` range (JoinGroup refused).
        public static let invalidSessionTimeout = Code(RD_KAFKA_RESP_ERR_INVALID_SESSION_TIMEOUT)
        /// Not authorized to access the topic.
        public static let topicAuthorizationFailed = Code(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
        /// Not authorized to access the group.
        public static let groupAuthorizationFailed = Code(RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED)
        /// Not authorized for a cluster operation.
        public static let clusterAuthorizationFailed = Code(RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)
        /// The broker does not support the request version.
        public static let unsupportedVersion = Code(RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION)
        /// The topic already exists.
        public static let topicAlreadyExists = Code(RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        /// The partition count is invalid.
        public static let invalidPartitions = Code(RD_KAFKA_RESP_ERR_INVALID_PARTITIONS)
        /// The replication factor is invalid (more than the brokers available).
        public static let invalidReplicationFactor = Code(RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR)
        /// A configuration value is invalid.
        public static let invalidConfig = Code(RD_KAFKA_RESP_ERR_INVALID_CONFIG)
        /// The request is invalid.
        public static let invalidRequest = Code(RD_KAFKA_RESP_ERR_INVALID_REQUEST)
        /// The request violates a broker policy.
        public static let policyViolation = Code(RD_KAFKA_RESP_ERR_POLICY_VIOLATION)
        /// The broker saw a gap in the idempotent producer's sequence numbers.
        public static let outOfOrderSequenceNumber = Code(RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER)
        /// The producer epoch is stale.
        public static let invalidProducerEpoch = Code(RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH)
        /// The broker no longer knows the producer id.
        public static let unknownProducerID = Code(RD_KAFKA_RESP_ERR_UNKNOWN_PRODUCER_ID)
        /// The broker rejected the record (for example a compacted topic without a key).
        public static let invalidRecord = Code(RD_KAFKA_RESP_ERR_INVALID_RECORD)
        /// Another member uses the same `group.instance.id`.
        public static let fencedInstanceID = Code(RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID)
        /// The broker's storage failed.
        public static let kafkaStorageError = Code(RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR)

        /// Codes that normally clear up when the operation is retried.
        var isUsuallyRetriable: Bool {
            Self.retriable.contains(self)
        }

        private static let retriable: Set<Code> = [
            .timedOut, .transport, .allBrokersDown, .queueFull, .messageTimedOut, .leaderNotAvailable,
            .notLeaderForPartition, .requestTimedOut, .networkException, .coordinatorLoadInProgress,
            .coordinatorNotAvailable, .notCoordinator, .notEnoughReplicas, .notEnoughReplicasAfterAppend,
            .rebalanceInProgress, .unknownTopicOrPartition, .kafkaStorageError,
            Code(RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE), Code(RD_KAFKA_RESP_ERR_REPLICA_NOT_AVAILABLE),
            Code(RD_KAFKA_RESP_ERR__RESOLVE), Code(RD_KAFKA_RESP_ERR__WAIT_COORD),
            Code(RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE), Code(RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH),
            Code(RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH), Code(RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE),
            Code(RD_KAFKA_RESP_ERR_PREFERRED_LEADER_NOT_AVAILABLE), Code(RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED),
        ]
    }
}
