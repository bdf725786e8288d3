import CRdKafka

extension KafkaProducer {
    /// The per-message opaque handed to librdkafka: retained while the record is in flight, released
    /// exactly once, by the delivery report or when the produce call fails synchronously.
    final class Delivery {
        let completion: @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void
        let inFlight: InFlight

        init(completion: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void, inFlight: InFlight) {
            self.completion = completion
            self.inFlight = inFlight
        }

        func complete(_ result: Result<KafkaDeliveryReport, KafkaError>) {
            completion(result)
            inFlight.end()
        }
    }
}

/// librdkafka's `dr_msg_cb`: runs on the producer's poll thread (inside `rd_kafka_poll`).
func kafkaProducerDeliveryReport(_ handle: OpaquePointer?, _ message: UnsafePointer<rd_kafka_message_t>?,
                                 _ opaque: UnsafeMutableRawPointer?) {
    guard let message, let boxPointer = message.pointee._private else { return }
    let delivery = Unmanaged<KafkaProducer.Delivery>.fromOpaque(boxPointer).takeRetainedValue()
    let record = message.pointee
    let topic = record.rkt.map { String(cString: rd_kafka_topic_name($0)) } ?? ""
    if record.err == RD_KAFKA_RESP_ERR_NO_ERROR {
        delivery.complete(.success(KafkaDeliveryReport(topic: topic, partition: record.partition, offset: record.offset)))
        return
    }
    let place = "delivery to \(topic)[\(record.partition)] failed"
    if record.err == RD_KAFKA_RESP_ERR__FATAL, let handle {
        var reason = [CChar](repeating: 0, count: 512)
        let underlying = rd_kafka_fatal_error(handle, &reason, reason.count)
        let text = KafkaConfiguration.text(reason)
        delivery.complete(.failure(KafkaError(
            code: KafkaError.Code(underlying), message: "\(place): fatal producer error: \(text); recreate the producer",
            isRetriable: false, isFatal: true)))
        return
    }
    var error = KafkaError.fromLibrary(record.err, context: place)
    if record.err == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT {
        error.message += " (not acknowledged within message.timeout.ms; the record may or may not have been written)"
    }
    delivery.complete(.failure(error))
}

/// librdkafka's `error_cb` for producers: runs on the poll thread.
func kafkaProducerError(_ handle: OpaquePointer?, _ code: Int32, _ reason: UnsafePointer<CChar>?,
                        _ opaque: UnsafeMutableRawPointer?) {
    guard let opaque else { return }
    let context = Unmanaged<KafkaProducer.Callbacks>.fromOpaque(opaque).takeUnretainedValue()
    let text = KafkaSecretRedaction.redact(reason.map { String(cString: $0) } ?? "")
    var error = KafkaError(code: KafkaError.Code(rawValue: code), message: text)
    if code == RD_KAFKA_RESP_ERR__FATAL.rawValue, let handle {
        var buffer = [CChar](repeating: 0, count: 512)
        let underlying = rd_kafka_fatal_error(handle, &buffer, buffer.count)
        error = KafkaError(code: KafkaError.Code(underlying),
                           message: "fatal producer error: \(KafkaSecretRedaction.redact(KafkaConfiguration.text(buffer))); recreate the producer",
                           isRetriable: false, isFatal: true)
    }
    context.onError?(error)
}
