import Kafka
import Synchronization

/// Watches producers through weak references.
final class ProducerWatcher: Sendable {
    private let reference: Mutex<WeakProducer>
    private struct WeakProducer { weak var value: KafkaProducer? }

    init(_ producer: KafkaProducer) { reference = Mutex(WeakProducer(value: producer)) }
    var isAlive: Bool { reference.withLock { $0.value != nil } }
}
