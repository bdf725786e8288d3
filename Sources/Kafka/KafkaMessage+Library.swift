import CRdKafka
#if canImport(Glibc)
import Glibc
#endif

/// Copies of records as librdkafka hands them to a consumer.
extension KafkaMessage {
    /// Turns a consumed `rd_kafka_message_t` into a message or an error (the caller destroys it);
    /// a record over `limits` into its sizes and digest, nothing of it copied.
    static func from(_ pointer: UnsafeMutablePointer<rd_kafka_message_t>, limits: KafkaRecordLimits? = nil) -> Result<KafkaMessage, KafkaError> {
        let record = pointer.pointee
        let topic = record.rkt.map { String(cString: rd_kafka_topic_name($0)) }
        if record.err != RD_KAFKA_RESP_ERR_NO_ERROR {
            var error = KafkaError.fromLibrary(record.err)
            if let detail = rd_kafka_message_errstr(pointer).map({ KafkaSecretRedaction.redact(String(cString: $0)) }), !detail.isEmpty {
                error.message = detail
            }
            if let topic {
                error.message = "\(TopicPartition(topic: topic, partition: record.partition)): \(error.message)"
            }
            return .failure(error)
        }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(pointer, &timestampType)
        let timestampMs: Int64? = timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || timestamp < 0 ? nil : timestamp
        if let limits {
            let keyBytes = record.key == nil ? nil : record.key_len
            let valueBytes = record.payload == nil ? 0 : record.len
            let headers = headerSizes(of: pointer)
            if !limits.admits(keyBytes: keyBytes, valueBytes: valueBytes, headerCount: headers.count, headerBytes: headers.bytes) {
                let digest = limits.digest(UnsafeRawBufferPointer(start: record.payload, count: valueBytes))
                let key = record.key.flatMap { record.key_len <= limits.maxKeyBytes ? Array(UnsafeRawBufferPointer(start: $0, count: record.key_len)) : nil }
                return .success(KafkaMessage(
                    topic: topic ?? "", partition: record.partition, offset: record.offset, key: key, value: [], headers: [],
                    timestampMs: timestampMs,
                    oversize: Oversize(keyBytes: keyBytes, valueBytes: valueBytes, headerCount: headers.count,
                                                    headerBytes: headers.bytes, valueDigest: digest)))
            }
        }
        let key = record.key.map { Array(UnsafeRawBufferPointer(start: $0, count: record.key_len)) }
        let value = record.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: record.len)) } ?? []
        return .success(KafkaMessage(
            topic: topic ?? "", partition: record.partition, offset: record.offset, key: key, value: value,
            headers: headers(of: pointer), timestampMs: timestampMs))
    }

    private static func headers(of message: UnsafeMutablePointer<rd_kafka_message_t>) -> [KafkaHeader] {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        var headers: [KafkaHeader] = []
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
            headers.append(KafkaHeader(key: name.map { String(cString: $0) } ?? "", value: bytes))
            index += 1
        }
        return headers
    }

    /// The header count and bytes (names and values) of a consumed record, counted without copying any.
    static func headerSizes(of message: UnsafeMutablePointer<rd_kafka_message_t>) -> (count: Int, bytes: Int) {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(message, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return (0, 0) }
        var count = 0
        var bytes = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, count, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            bytes += (name.map { strlen($0) } ?? 0) + size
            count += 1
        }
        return (count, bytes)
    }
}
