import Kafka
import Synchronization

/// Collects delivery results from producer callbacks, with the thread each callback ran on.
final class DeliveryRecorder: Sendable {
    private let results = Mutex<[Result<KafkaDeliveryReport, KafkaError>]>([])

    /// A callback that records into this recorder.
    var callback: @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void {
        { [self] result in results.withLock { $0.append(result) } }
    }

    var all: [Result<KafkaDeliveryReport, KafkaError>] { results.withLock { $0 } }
    var count: Int { results.withLock { $0.count } }
}
