import Foundation
import Kafka
import TestSupport

/// Blocking consumer loops for tests, run on dedicated threads so they never block Swift's pool.
enum Polling {
    /// Polls `consumer` until `count` messages arrived or `timeout` passed; returns what arrived.
    static func messages(from consumer: KafkaConsumer, count: Int, timeout: Duration = .seconds(15)) async -> [KafkaMessage] {
        await DedicatedThread.run(name: "test-poll") {
            var messages: [KafkaMessage] = []
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while messages.count < count && ContinuousClock.now < deadline {
                for case .success(let message) in consumer.poll(maxMessages: 100, timeoutMs: 20) {
                    messages.append(message)
                }
            }
            return messages
        }
    }

    /// Polls `consumer` for the whole of `duration`; returns every message that arrived.
    static func messages(from consumer: KafkaConsumer, during duration: Duration) async -> [KafkaMessage] {
        await DedicatedThread.run(name: "test-poll") {
            var messages: [KafkaMessage] = []
            let deadline = ContinuousClock.now.advanced(by: duration)
            while ContinuousClock.now < deadline {
                for case .success(let message) in consumer.poll(maxMessages: 100, timeoutMs: 20) {
                    messages.append(message)
                }
            }
            return messages
        }
    }

    /// Polls `consumer` (serving rebalances) until `condition` holds or `timeout` passed.
    static func until(_ consumer: KafkaConsumer, timeout: Duration = .seconds(15),
                      _ condition: @escaping @Sendable () -> Bool) async -> Bool {
        await DedicatedThread.run(name: "test-poll") {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while !condition() {
                guard ContinuousClock.now < deadline else { return false }
                _ = consumer.poll(maxMessages: 100, timeoutMs: 20)
            }
            return true
        }
    }

    /// Waits, without polling, until `condition` has held for `stableFor` without interruption, or
    /// `timeout` passed.
    static func wait(timeout: Duration, stableFor: Duration, _ condition: @Sendable () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var holdingSince: ContinuousClock.Instant?
        while ContinuousClock.now < deadline {
            if condition() {
                let since = holdingSince ?? ContinuousClock.now
                holdingSince = since
                if ContinuousClock.now - since >= stableFor { return true }
            } else {
                holdingSince = nil
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
