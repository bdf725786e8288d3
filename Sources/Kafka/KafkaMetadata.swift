import CRdKafka

/// Reads cluster metadata through any client handle.
enum KafkaMetadata {
    /// Every topic the cluster reports (never creates a topic, unlike a per-topic metadata request).
    static func topics(handle: OpaquePointer, timeoutMs: Int32) throws(KafkaError) -> [KafkaTopicMetadata] {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 1, nil, &metadata, Int32(timeoutMs))
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError.fromLibrary(error, context: "reading cluster metadata within \(timeoutMs) ms failed; check bootstrap.servers and that the brokers are up")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        let topics = UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt))
        return topics.compactMap { topic in
            guard topic.err == RD_KAFKA_RESP_ERR_NO_ERROR, let name = topic.topic else { return nil }
            let partitions = UnsafeBufferPointer(start: topic.partitions, count: Int(topic.partition_cnt))
            return KafkaTopicMetadata(name: String(cString: name), partitions: partitions.count,
                                      replicationFactor: Int(partitions.first?.replica_cnt ?? 0))
        }
    }

    /// Every topic the cluster lists for this client, with its partition count, or nil for a topic
    /// listed with an error (not authorized, leader not available, ...). Never creates a topic.
    static func partitionCounts(handle: OpaquePointer, timeoutMs: Int32) throws(KafkaError) -> [String: Int?] {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 1, nil, &metadata, Int32(timeoutMs))
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            throw KafkaError.fromLibrary(error, context: "reading cluster metadata within \(timeoutMs) ms failed; check bootstrap.servers and that the brokers are up")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        var counts: [String: Int?] = [:]
        for topic in UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt)) {
            guard let name = topic.topic else { continue }
            let listed = topic.err == RD_KAFKA_RESP_ERR_NO_ERROR && topic.partition_cnt > 0
            counts[String(cString: name)] = listed ? Int(topic.partition_cnt) : nil as Int?
        }
        return counts
    }

    /// The partition count of `topic`, or `.unknownTopicOrPartition` when the cluster does not have it.
    static func partitionCount(handle: OpaquePointer, topic: String, timeoutMs: Int32) throws(KafkaError) -> Int {
        let topics = try self.topics(handle: handle, timeoutMs: timeoutMs)
        guard let found = topics.first(where: { $0.name == topic }), found.partitions > 0 else {
            throw KafkaError(code: .unknownTopicOrPartition,
                             message: "topic '\(topic)' does not exist in the cluster; create it first")
        }
        return found.partitions
    }
}
