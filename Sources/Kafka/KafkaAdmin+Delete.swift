import CRdKafka

extension KafkaAdmin {
    /// Deletes `names` (and every record in them); returns each topic's outcome (`nil` for
    /// deleted, or its error such as `.unknownTopicOrPartition`). Throws when the request as a whole
    /// failed, for example `.timedOut` when no controller answered within `timeoutMs`.
    public func deleteTopics(_ names: [String], timeoutMs: Int32) throws(KafkaError) -> [String: KafkaError?] {
        guard !names.isEmpty else { return [:] }
        return try call { () throws(KafkaError) -> [String: KafkaError?] in
            var deletions: [OpaquePointer?] = names.map { rd_kafka_DeleteTopic_new($0) }
            defer { deletions.forEach { rd_kafka_DeleteTopic_destroy($0) } }
            let event = try run("DeleteTopics", operation: RD_KAFKA_ADMIN_OP_DELETETOPICS, timeoutMs: timeoutMs) { options, queue in
                rd_kafka_DeleteTopics(handle, &deletions, deletions.count, options, queue)
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            guard let result = rd_kafka_event_DeleteTopics_result(event), let results = rd_kafka_DeleteTopics_result_topics(result, &count) else { return [:] }
            return Self.topicOutcomes(results, count: count) { "deleting topic '\($0)' failed" }
        }
    }
}
