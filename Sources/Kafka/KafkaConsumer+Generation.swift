import CRdKafka

extension KafkaConsumer {
    /// The consumer group's generation this member is in (the group coordinator raises it on every
    /// rebalance), or nil outside a group. Read in a rebalance callback, it is the generation that
    /// rebalance formed. librdkafka has no getter for it: it is read from the group metadata's
    /// serialized form (`rd_kafka_consumer_group_metadata_write`: the 7-byte magic `CGMDv2:` and
    /// the generation as a native int32), the same in 2.0.2 and 2.16.
    public var groupGeneration: Int32? {
        try? call { () throws(KafkaError) -> Int32? in
            guard let metadata = rd_kafka_consumer_group_metadata(handle) else { return nil }
            defer { rd_kafka_consumer_group_metadata_destroy(metadata) }
            var buffer: UnsafeMutableRawPointer?
            var size = 0
            if let error = rd_kafka_consumer_group_metadata_write(metadata, &buffer, &size) {
                rd_kafka_error_destroy(error)
                return nil
            }
            guard let buffer else { return nil }
            defer { rd_kafka_mem_free(nil, buffer) }
            let magic = Array("CGMDv2:".utf8)
            guard size >= magic.count + 4,
                  Array(UnsafeRawBufferPointer(start: buffer, count: magic.count)) == magic else { return nil }
            let generation = buffer.loadUnaligned(fromByteOffset: magic.count, as: Int32.self)
            return generation >= 0 ? generation : nil
        } ?? nil
    }
}
