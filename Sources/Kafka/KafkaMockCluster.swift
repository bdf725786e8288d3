import CRdKafka

/// An in-process Kafka cluster: librdkafka's mock cluster, a real Kafka protocol endpoint on
/// loopback TCP that clients in this and other processes (kcat, confluent-kafka) can use.
///
/// It supports producing (idempotent and transactional too), consumer groups with commits, topic
/// auto-creation, error injection, broker down/up and round-trip delays. It does not implement the
/// admin requests (see `KafkaAdmin`). Each partition keeps only a few MB: older data is dropped.
/// Broker ids are 1...brokers. For tests and embedded demos only.
public final class KafkaMockCluster: @unchecked Sendable {
    // @unchecked Sendable: the mock cluster API forwards every call to the cluster's own thread and
    // waits for it, so it is safe from any thread; `gate` (a Mutex) keeps `close` from destroying
    // the cluster under a running call.

    private let handle: OpaquePointer
    private let cluster: OpaquePointer
    private let gate = KafkaClientGate()

    /// The `bootstrap.servers` value for clients (`127.0.0.1:PORT,...`).
    public let bootstrapServers: String
    /// The broker ids (1...brokers).
    public let brokerIDs: [Int32]

    /// Starts `brokers` mock brokers on loopback ports chosen by the system.
    public init(brokers: Int) throws(KafkaError) {
        guard (1...64).contains(brokers) else {
            throw KafkaError(code: .invalidArgument, message: "a mock cluster needs 1 to 64 brokers, got \(brokers)")
        }
        // The mock cluster lives inside a client instance that owns its thread; this one never connects
        // anywhere. log_level 4 silences the notice that it has no bootstrap.servers.
        let conf = try KafkaConfiguration.make(["log_level": "4", "client.id": "provisioner-mock-cluster"])
        let handle = try KafkaConfiguration.makeHandle(type: RD_KAFKA_PRODUCER, conf: conf, role: "mock cluster host")
        guard let cluster = rd_kafka_mock_cluster_new(handle, Int32(brokers)) else {
            rd_kafka_destroy(handle)
            throw KafkaError(code: .fail, message: "librdkafka could not start a mock cluster (no free loopback ports?)")
        }
        self.handle = handle
        self.cluster = cluster
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        self.brokerIDs = (1...brokers).map { Int32($0) }
    }

    deinit {
        close()
    }

    /// Creates `name` with `partitions` partitions, each replicated on `replicationFactor` brokers.
    /// Throws `.topicAlreadyExists` when it exists.
    public func createTopic(_ name: String, partitions: Int, replicationFactor: Int) throws(KafkaError) {
        let error = try call { () throws(KafkaError) in
            rd_kafka_mock_topic_create(cluster, name, Int32(partitions), Int32(replicationFactor))
        }
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError.fromLibrary(error, context: "creating mock topic '\(name)' (\(partitions) partitions, replication \(replicationFactor)) failed")
        }
    }

    /// Takes a broker down: its connections close and it refuses new ones until `setBrokerUp`.
    /// Returns the error for an unknown broker id.
    @discardableResult
    public func setBrokerDown(_ brokerID: Int32) -> KafkaError? {
        check("taking broker \(brokerID) down") { rd_kafka_mock_broker_set_down(cluster, brokerID) }
    }

    /// Brings a broker back up. Returns the error for an unknown broker id.
    @discardableResult
    public func setBrokerUp(_ brokerID: Int32) -> KafkaError? {
        check("bringing broker \(brokerID) up") { rd_kafka_mock_broker_set_up(cluster, brokerID) }
    }

    /// Delays every response of a broker by `milliseconds`. Returns the error for an unknown broker id.
    @discardableResult
    public func setRoundTripTime(_ brokerID: Int32, milliseconds: Int) -> KafkaError? {
        check("setting the round-trip time of broker \(brokerID)") {
            rd_kafka_mock_broker_set_rtt(cluster, brokerID, Int32(milliseconds))
        }
    }

    /// Makes the next `errors.count` requests of type `apiKey` (to any broker) fail, in order, with
    /// these codes.
    public func pushRequestErrors(apiKey: KafkaAPIKey, errors: [KafkaError.Code]) {
        guard !errors.isEmpty else { return }
        _ = try? call { () throws(KafkaError) in
            let codes = errors.map(\.raw)
            codes.withUnsafeBufferPointer { buffer in
                rd_kafka_mock_push_request_errors_array(cluster, apiKey.rawValue, buffer.count, buffer.baseAddress)
            }
        }
    }

    /// Makes the next `errors.count` requests of type `apiKey` to broker `brokerID` fail, in order,
    /// with these codes (they take precedence over errors pushed for the whole cluster). With a
    /// topic's partitions led by that broker alone, this fails that topic's writes and nothing else.
    @discardableResult
    public func pushRequestErrors(brokerID: Int32, apiKey: KafkaAPIKey, errors: [KafkaError.Code]) -> KafkaError? {
        for code in errors {
            if let failure = check("pushing a \(apiKey) error onto broker \(brokerID)", {
                provisioner_mock_broker_push_request_error(cluster, brokerID, apiKey.rawValue, code.raw)
            }) {
                return failure
            }
        }
        return nil
    }

    /// Makes Metadata responses report `error` for `topic` (`.noError` clears it). Clients that
    /// already know the topic's leaders are not affected until they refresh metadata.
    public func setTopicError(_ topic: String, error: KafkaError.Code) {
        _ = try? call { () throws(KafkaError) in
            rd_kafka_mock_topic_set_error(cluster, topic, error.raw)
        }
    }

    /// Moves the leadership of a partition to `brokerID`. Returns the error for an unknown topic,
    /// partition or broker.
    @discardableResult
    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) -> KafkaError? {
        check("moving the leader of \(topic)[\(partition)] to broker \(brokerID)") {
            rd_kafka_mock_partition_set_leader(cluster, topic, partition, brokerID)
        }
    }

    /// Stops every broker and frees the cluster; connected clients see their brokers go away.
    /// Idempotent.
    public func close() {
        guard gate.beginDraining() else { return }
        gate.close()
        rd_kafka_mock_cluster_destroy(cluster)
        rd_kafka_destroy(handle)
    }

    private func check(_ action: String, _ body: () -> rd_kafka_resp_err_t) -> KafkaError? {
        do {
            let error = try call { () throws(KafkaError) in body() }
            return error == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError.fromLibrary(error, context: "\(action) failed")
        } catch {
            return error
        }
    }

    private func call<T>(_ body: () throws(KafkaError) -> T) throws(KafkaError) -> T {
        guard let result = try gate.withCall(.short, body) else { throw KafkaError.closed("mock cluster") }
        return result
    }
}
