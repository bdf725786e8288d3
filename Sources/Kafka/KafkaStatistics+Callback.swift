import CRdKafka

extension KafkaStatistics {
    /// Reads one report librdkafka handed over and gives it to `handler`. librdkafka frees the
    /// buffer after the callback returns 0, which every statistics callback here returns.
    static func deliver(_ json: UnsafeMutablePointer<CChar>?, _ length: Int, to handler: Handler) {
        guard let json, length > 0 else { return }
        let bytes = Array(UnsafeRawBufferPointer(start: json, count: length))
        do throws(KafkaError) {
            handler(.success(try KafkaStatistics(json: bytes)))
        } catch {
            handler(.failure(error))
        }
    }
}

/// librdkafka's `stats_cb` for producers: runs on the producer's poll thread; `opaque` is the
/// producer's `Callbacks`.
func kafkaProducerStatistics(_ handle: OpaquePointer?, _ json: UnsafeMutablePointer<CChar>?, _ length: Int,
                             _ opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let opaque else { return 0 }
    let callbacks = Unmanaged<KafkaProducer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    if let handler = callbacks.statistics { KafkaStatistics.deliver(json, length, to: handler) }
    return 0
}

/// librdkafka's `stats_cb` for consumers: runs inside `poll` (the main queue is forwarded to the
/// consumer queue); `opaque` is the consumer's `Callbacks`.
func kafkaConsumerStatistics(_ handle: OpaquePointer?, _ json: UnsafeMutablePointer<CChar>?, _ length: Int,
                             _ opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let opaque else { return 0 }
    let callbacks = Unmanaged<KafkaConsumer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    if let handler = callbacks.statistics { KafkaStatistics.deliver(json, length, to: handler) }
    return 0
}
