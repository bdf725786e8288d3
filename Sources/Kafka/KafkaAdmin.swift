import CRdKafka
import Dispatch

/// Creates topics and reads or changes their configuration, through Kafka's admin API.
///
/// Limits of librdkafka's mock cluster (`provisioner broker`, `KafkaMockCluster`), checked with
/// librdkafka 2.0.2: it serves Metadata, so `listTopics` works, but it names no controller and does
/// not implement CreateTopics, DescribeConfigs or AlterConfigs. Against it those three calls fail
/// after `timeoutMs` with `.timedOut` ("Failed while waiting for controller"); create mock topics
/// with `KafkaMockCluster.createTopic` instead. Against a real cluster they work as usual.
public final class KafkaAdmin: @unchecked Sendable {
    // @unchecked Sendable: the librdkafka handle is safe to use from any thread (librdkafka documents
    // it), each call uses its own result queue, and `gate` (a Mutex) keeps `close` from destroying
    // the handle under a running call.

    let handle: OpaquePointer
    private let gate = KafkaClientGate()

    /// Creates an admin client from librdkafka properties (at least `bootstrap.servers`).
    public init(configuration: [String: String]) throws(KafkaError) {
        let conf = try KafkaConfiguration.make(configuration)
        handle = try KafkaConfiguration.makeHandle(type: RD_KAFKA_PRODUCER, conf: conf, role: "admin client")
    }

    deinit {
        close()
    }

    /// Destroys the client; later calls throw `.destroyed`. Idempotent.
    public func close() {
        guard gate.beginDraining() else { return }
        gate.close()
        rd_kafka_destroy(handle)
    }

    /// Creates `topics`; returns each topic's outcome (`nil` for created, or its error such as
    /// `.topicAlreadyExists`). Throws when the request as a whole failed, for example `.timedOut`
    /// when no controller answered within `timeoutMs` (always the case on the mock cluster).
    public func createTopics(_ topics: [KafkaTopicSpecification], timeoutMs: Int32) throws(KafkaError) -> [String: KafkaError?] {
        guard !topics.isEmpty else { return [:] }
        return try call { () throws(KafkaError) -> [String: KafkaError?] in
            var newTopics: [OpaquePointer?] = []
            defer { newTopics.forEach { rd_kafka_NewTopic_destroy($0) } }
            var errorText = [CChar](repeating: 0, count: 512)
            for topic in topics {
                guard !topic.name.isEmpty, topic.partitions == -1 || topic.partitions >= 1,
                      topic.replicationFactor == -1 || topic.replicationFactor >= 1 else {
                    throw KafkaError(code: .invalidArgument, message: """
                        invalid topic specification '\(topic.name)': \(topic.partitions) partitions, replication factor \
                        \(topic.replicationFactor); use a name, at least 1 of each, or -1 for the broker's default
                        """, isRetriable: false)
                }
                guard let newTopic = rd_kafka_NewTopic_new(topic.name, Int32(topic.partitions), Int32(topic.replicationFactor),
                                                           &errorText, errorText.count) else {
                    throw KafkaError(code: .invalidArgument,
                                     message: "invalid topic specification '\(topic.name)': \(KafkaConfiguration.text(errorText))")
                }
                newTopics.append(newTopic)
                for (key, value) in topic.configs.sorted(by: { $0.key < $1.key }) {
                    let error = rd_kafka_NewTopic_set_config(newTopic, key, value)
                    guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                        throw KafkaError.fromLibrary(error, context: "topic '\(topic.name)': config '\(key)' rejected")
                    }
                }
            }
            let event = try run("CreateTopics", operation: RD_KAFKA_ADMIN_OP_CREATETOPICS, timeoutMs: timeoutMs) { options, queue in
                rd_kafka_CreateTopics(handle, &newTopics, newTopics.count, options, queue)
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            guard let result = rd_kafka_event_CreateTopics_result(event), let results = rd_kafka_CreateTopics_result_topics(result, &count) else { return [:] }
            return Self.topicOutcomes(results, count: count) { "creating topic '\($0)' failed" }
        }
    }

    /// Each topic's outcome in an admin result's `count` topic results (`nil`: done; else its error,
    /// worded "`failed(name)`: the broker's text").
    static func topicOutcomes(_ results: UnsafeMutablePointer<OpaquePointer?>, count: Int,
                              failed: (String) -> String) -> [String: KafkaError?] {
        var outcome: [String: KafkaError?] = [:]
        for index in 0..<count {
            guard let item = results[index] else { continue }
            let name = String(cString: rd_kafka_topic_result_name(item))
            let code = rd_kafka_topic_result_error(item)
            if code == RD_KAFKA_RESP_ERR_NO_ERROR {
                outcome[name] = .some(nil)
            } else {
                let text = rd_kafka_topic_result_error_string(item).map { String(cString: $0) } ?? ""
                outcome[name] = .some(KafkaError(code: KafkaError.Code(code), message: "\(failed(name)): \(text)"))
            }
        }
        return outcome
    }

    /// Raises the partition count of each named topic to the given total (Kafka can only add
    /// partitions, never remove them); returns each topic's outcome (`nil` for done, or its error
    /// such as `.invalidPartitions` when the total is not above the current count). Throws when the
    /// request as a whole failed, for example `.timedOut` when no controller answered within
    /// `timeoutMs` (always the case on the mock cluster).
    public func createPartitions(_ totals: [String: Int], timeoutMs: Int32) throws(KafkaError) -> [String: KafkaError?] {
        guard !totals.isEmpty else { return [:] }
        return try call { () throws(KafkaError) -> [String: KafkaError?] in
            var newPartitions: [OpaquePointer?] = []
            defer { newPartitions.forEach { rd_kafka_NewPartitions_destroy($0) } }
            var errorText = [CChar](repeating: 0, count: 512)
            for (topic, total) in totals.sorted(by: { $0.key < $1.key }) {
                guard !topic.isEmpty, total >= 1,
                      let item = rd_kafka_NewPartitions_new(topic, total, &errorText, errorText.count) else {
                    throw KafkaError(code: .invalidArgument, message: """
                        invalid partition increase for topic '\(topic)' to \(total): \(KafkaConfiguration.text(errorText)); \
                        use a topic name and a total of at least 1
                        """, isRetriable: false)
                }
                newPartitions.append(item)
            }
            let event = try run("CreatePartitions", operation: RD_KAFKA_ADMIN_OP_CREATEPARTITIONS, timeoutMs: timeoutMs) { options, queue in
                rd_kafka_CreatePartitions(handle, &newPartitions, newPartitions.count, options, queue)
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            guard let result = rd_kafka_event_CreatePartitions_result(event), let results = rd_kafka_CreatePartitions_result_topics(result, &count) else { return [:] }
            return Self.topicOutcomes(results, count: count) { "adding partitions to topic '\($0)' failed" }
        }
    }

    /// Every topic the cluster reports, with partition count and replication factor (from Metadata;
    /// works against the mock cluster too).
    public func listTopics(timeoutMs: Int32) throws(KafkaError) -> [KafkaTopicMetadata] {
        try call { () throws(KafkaError) -> [KafkaTopicMetadata] in
            try KafkaMetadata.topics(handle: handle, timeoutMs: timeoutMs).sorted { $0.name < $1.name }
        }
    }

    /// The configuration of each named topic (every entry with a readable value, defaults included).
    /// Fails with `.timedOut` on the mock cluster (see the type's documentation).
    public func describeTopicConfigs(_ names: [String], timeoutMs: Int32) throws(KafkaError) -> [String: [String: String]] {
        try call { () throws(KafkaError) -> [String: [String: String]] in
            try describe(names, timeoutMs: timeoutMs).mapValues { entries in entries.mapValues(\.value) }
        }
    }

    /// Sets the given configuration entries of each topic, keeping its other dynamic (non-default)
    /// entries: AlterConfigs replaces a topic's whole dynamic configuration, so the current one is read
    /// first and merged (the two requests together take up to twice `timeoutMs`). Fails with
    /// `.timedOut` on the mock cluster (see the type's documentation).
    public func alterTopicConfigs(_ configs: [String: [String: String]], timeoutMs: Int32) throws(KafkaError) {
        guard !configs.isEmpty else { return }
        try call { () throws(KafkaError) in
            let current = try describe(Array(configs.keys), timeoutMs: timeoutMs)
            var resources: [OpaquePointer?] = []
            defer { resources.forEach { rd_kafka_ConfigResource_destroy($0) } }
            for (topic, changes) in configs.sorted(by: { $0.key < $1.key }) {
                var merged: [String: String] = [:]
                for (key, entry) in current[topic] ?? [:] where entry.isDynamicTopicConfig {
                    merged[key] = entry.value
                }
                merged.merge(changes) { _, new in new }
                let resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic)
                resources.append(resource)
                for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
                    let error = rd_kafka_ConfigResource_set_config(resource, key, value)
                    guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                        throw KafkaError.fromLibrary(error, context: "topic '\(topic)': config '\(key)' rejected")
                    }
                }
            }
            let event = try run("AlterConfigs", operation: RD_KAFKA_ADMIN_OP_ALTERCONFIGS, timeoutMs: timeoutMs) { options, queue in
                rd_kafka_AlterConfigs(handle, &resources, resources.count, options, queue)
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            if let result = rd_kafka_event_AlterConfigs_result(event),
               let results = rd_kafka_AlterConfigs_result_resources(result, &count) {
                for index in 0..<count {
                    guard let resource = results[index] else { continue }
                    let code = rd_kafka_ConfigResource_error(resource)
                    if code != RD_KAFKA_RESP_ERR_NO_ERROR {
                        let name = String(cString: rd_kafka_ConfigResource_name(resource))
                        let text = rd_kafka_ConfigResource_error_string(resource).map { String(cString: $0) } ?? ""
                        throw KafkaError(code: KafkaError.Code(code), message: "altering the configuration of topic '\(name)' failed: \(text)")
                    }
                }
            }
        }
    }

    private struct ConfigEntry {
        var value: String
        var isDynamicTopicConfig: Bool
    }

    private func describe(_ names: [String], timeoutMs: Int32) throws(KafkaError) -> [String: [String: ConfigEntry]] {
        guard !names.isEmpty else { return [:] }
        var resources: [OpaquePointer?] = names.map { rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, $0) }
        defer { resources.forEach { rd_kafka_ConfigResource_destroy($0) } }
        let event = try run("DescribeConfigs", operation: RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeoutMs: timeoutMs) { options, queue in
            rd_kafka_DescribeConfigs(handle, &resources, resources.count, options, queue)
        }
        defer { rd_kafka_event_destroy(event) }
        var described: [String: [String: ConfigEntry]] = [:]
        var count = 0
        guard let result = rd_kafka_event_DescribeConfigs_result(event),
              let results = rd_kafka_DescribeConfigs_result_resources(result, &count) else { return [:] }
        for index in 0..<count {
            guard let resource = results[index] else { continue }
            let name = String(cString: rd_kafka_ConfigResource_name(resource))
            let code = rd_kafka_ConfigResource_error(resource)
            guard code == RD_KAFKA_RESP_ERR_NO_ERROR else {
                let text = rd_kafka_ConfigResource_error_string(resource).map { String(cString: $0) } ?? ""
                throw KafkaError(code: KafkaError.Code(code), message: "describing the configuration of topic '\(name)' failed: \(text)")
            }
            var entries: [String: ConfigEntry] = [:]
            var entryCount = 0
            if let configs = rd_kafka_ConfigResource_configs(resource, &entryCount) {
                for entryIndex in 0..<entryCount {
                    guard let entry = configs[entryIndex], let value = rd_kafka_ConfigEntry_value(entry) else { continue }
                    let key = String(cString: rd_kafka_ConfigEntry_name(entry))
                    entries[key] = ConfigEntry(value: String(cString: value),
                                               isDynamicTopicConfig: rd_kafka_ConfigEntry_source(entry) == RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG)
                }
            }
            described[name] = entries
        }
        return described
    }

    /// Starts an admin request with a private result queue and waits for its result event (the
    /// caller destroys it); throws the request-level error.
    func run(_ name: String, operation: rd_kafka_admin_op_t, timeoutMs: Int32,
             start: (OpaquePointer, OpaquePointer) -> Void) throws(KafkaError) -> OpaquePointer {
        guard let queue = rd_kafka_queue_new(handle), let options = rd_kafka_AdminOptions_new(handle, operation) else {
            throw KafkaError(code: .fail, message: "\(name): librdkafka could not allocate a request")
        }
        defer {
            rd_kafka_AdminOptions_destroy(options)
            rd_kafka_queue_destroy(queue)
            // Drop client events (errors, logs) that accumulate on the main queue.
            rd_kafka_poll(handle, 0)
        }
        var errorText = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, timeoutMs, &errorText, errorText.count)
        if operation == RD_KAFKA_ADMIN_OP_CREATETOPICS || operation == RD_KAFKA_ADMIN_OP_DELETETOPICS {
            _ = rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMs / 2, &errorText, errorText.count)
        }
        start(options, queue)
        // librdkafka enforces the request timeout itself; the margin only guards against a lost event.
        guard let event = rd_kafka_queue_poll(queue, timeoutMs + 5_000) else {
            throw Self.noAnswer(name, timeoutMs: timeoutMs, detail: "no result event")
        }
        let code = rd_kafka_event_error(event)
        guard code == RD_KAFKA_RESP_ERR_NO_ERROR else {
            let text = rd_kafka_event_error_string(event).map { KafkaSecretRedaction.redact(String(cString: $0)) } ?? KafkaError.Code(code).name
            rd_kafka_event_destroy(event)
            if code == RD_KAFKA_RESP_ERR__TIMED_OUT {
                throw Self.noAnswer(name, timeoutMs: timeoutMs, detail: text)
            }
            throw KafkaError(code: KafkaError.Code(code), message: "\(name) failed: \(text)")
        }
        return event
    }

    private static func noAnswer(_ name: String, timeoutMs: Int32, detail: String) -> KafkaError {
        KafkaError(code: .timedOut, message: """
            \(name) got no answer within \(timeoutMs) ms (\(detail)); check that the cluster has a reachable \
            controller. librdkafka's mock cluster (provisioner broker) does not implement admin requests: \
            create its topics with KafkaMockCluster.createTopic
            """)
    }

    func call<T>(_ body: () throws(KafkaError) -> T) throws(KafkaError) -> T {
        guard let result = try gate.withCall(.short, body) else { throw KafkaError.closed("admin client") }
        return result
    }
}
