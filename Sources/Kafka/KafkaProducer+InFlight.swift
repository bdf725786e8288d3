import Dispatch
import Synchronization

extension KafkaProducer {
    /// Counts records handed to librdkafka whose delivery callback has not finished yet, and lets
    /// `flush` and `close` wait for them.
    final class InFlight: Sendable {
        private let group = DispatchGroup()
        private let counter = Atomic<Int>(0)

        /// A record is about to be enqueued.
        func begin() {
            counter.add(1, ordering: .relaxed)
            group.enter()
        }

        /// Its callback finished, or it was never enqueued.
        func end() {
            counter.subtract(1, ordering: .relaxed)
            group.leave()
        }

        /// How many records are in flight.
        var count: Int { counter.load(ordering: .relaxed) }

        /// True when none is in flight.
        var isEmpty: Bool { group.wait(timeout: .now()) == .success }

        /// Waits until none is in flight or `timeoutMs` passed; true when none is.
        func wait(timeoutMs: Int32) -> Bool {
            group.wait(timeout: .now() + .milliseconds(Int(max(timeoutMs, 0)))) == .success
        }
    }
}
