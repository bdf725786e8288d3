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
            var outcome: [String: KafkaError?] = [:]
            var count = 0
            if let result = rd_kafka_event_DeleteTopics_result(event), let results = rd_kafka_DeleteTopics_result_topics(result, &count) {
                for index in 0..<count {
                    guard let item = results[index] else { continue }
                    let name = String(cString: rd_kafka_topic_result_name(item))
                    let code = rd_kafka_topic_result_error(item)
                    if code == RD_KAFKA_RESP_ERR_NO_ERROR {
                        outcome[name] = .some(nil)
                    } else {
                        let text = rd_kafka_topic_result_error_string(item).map { String(cString: $0) } ?? ""
                        outcome[name] = .some(KafkaError(code: KafkaError.Code(code), message: "deleting topic '\(name)' failed: \(text)"))
                    }
                }
            }
            return outcome
        }
    }
}
