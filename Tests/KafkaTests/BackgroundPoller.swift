import Foundation
import Kafka
import Synchronization
import TestSupport

/// Polls a consumer continuously on a thread of its own (named `test-poll`), as an application
/// would, until stopped or until the consumer is closed.
final class BackgroundPoller: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(_ consumer: KafkaConsumer) {
        let thread = Thread { [self] in
            DedicatedThread.nameCurrentThread("test-poll")
            polling: while !stopRequested.load(ordering: .acquiring) {
                for case .failure(let error) in consumer.poll(maxMessages: 100, timeoutMs: 20) where error.code == .destroyed {
                    break polling
                }
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// True once the loop ended (stopped, or the consumer was closed).
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Stops the loop and waits until it ended.
    func stop() async throws {
        stopRequested.store(true, ordering: .releasing)
        _ = try await Eventually.holds(within: .seconds(15)) { self.isFinished }
    }
}
