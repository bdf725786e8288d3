import CRdKafka
#if canImport(Glibc)
import Glibc
#endif

/// Converts between Swift values and `rd_kafka_topic_partition_list_t`.
enum TopicPartitionList {
    typealias Pointer = UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    /// A new list (destroy with `rd_kafka_topic_partition_list_destroy`) holding partitions only.
    static func make(_ partitions: [TopicPartition]) -> Pointer {
        let list = rd_kafka_topic_partition_list_new(Int32(max(partitions.count, 1)))!
        for partition in partitions {
            rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition)
        }
        return list
    }

    /// A new list holding offsets and commit metadata (copied with `malloc`, freed by librdkafka).
    static func make(_ offsets: [TopicPartitionOffset]) -> Pointer {
        let list = rd_kafka_topic_partition_list_new(Int32(max(offsets.count, 1)))!
        for item in offsets {
            let element = rd_kafka_topic_partition_list_add(list, item.topic, item.partition)!
            element.pointee.offset = item.offset
            if let metadata = item.metadata {
                let bytes = Array(metadata.utf8)
                if !bytes.isEmpty, let memory = malloc(bytes.count) {
                    bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                    element.pointee.metadata = memory
                    element.pointee.metadata_size = bytes.count
                }
            }
        }
        return list
    }

    /// The elements of `list`.
    static func elements(_ list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> UnsafeBufferPointer<rd_kafka_topic_partition_t> {
        guard let list, list.pointee.cnt > 0, let elements = list.pointee.elems else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return UnsafeBufferPointer(start: elements, count: Int(list.pointee.cnt))
    }

    /// The partitions of `list`.
    static func partitions(_ list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [TopicPartition] {
        elements(list).map { TopicPartition(topic: String(cString: $0.topic), partition: $0.partition) }
    }

    /// The offsets and commit metadata of `list`.
    static func offsets(_ list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [TopicPartitionOffset] {
        elements(list).map { element in
            var metadata: String?
            if let pointer = element.metadata, element.metadata_size > 0 {
                let bytes = UnsafeRawBufferPointer(start: pointer, count: element.metadata_size)
                metadata = String(decoding: bytes, as: UTF8.self)
            }
            return TopicPartitionOffset(topic: String(cString: element.topic), partition: element.partition,
                                        offset: element.offset, metadata: metadata)
        }
    }

    /// The first per-partition error in `list`, naming the partition.
    static func firstError(_ list: UnsafePointer<rd_kafka_topic_partition_list_t>?, operation: String) -> KafkaError? {
        for element in elements(list) where element.err != RD_KAFKA_RESP_ERR_NO_ERROR {
            let partition = TopicPartition(topic: String(cString: element.topic), partition: element.partition)
            return KafkaError.fromLibrary(element.err, context: "\(operation) \(partition)")
        }
        return nil
    }
}
