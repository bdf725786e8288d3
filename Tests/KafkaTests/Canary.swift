import Kafka
import Synchronization

/// An object whose lifetime shows whether a callback that captured it was released.
final class Canary: Sendable {
    /// A weak reference to a canary.
    struct Reference { weak var value: Canary? }

    private let touched = Atomic<Int>(0)
    func touch() { touched.add(1, ordering: .relaxed) }

    /// Sends `message` with a callback that holds a fresh canary; returns the synchronous error and a
    /// weak reference to the canary (nil once the callback was released).
    static func send(_ message: KafkaOutgoingMessage, with producer: KafkaProducer) -> (KafkaError?, Reference) {
        let canary = Canary()
        let reference = Reference(value: canary)
        do {
            try producer.send(message) { [canary] _ in canary.touch() }
            return (nil, reference)
        } catch {
            return (error, reference)
        }
    }
}
