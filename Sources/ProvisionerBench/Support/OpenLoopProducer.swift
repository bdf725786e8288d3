import Foundation
import Kafka
import Observability
import Synchronization

/// Produces prepared requests at a fixed rate, whatever happens downstream (open loop: a slow
/// pipeline does not slow the offered load), and records when each was sent.
final class OpenLoopProducer: Sendable {
    private let producer: KafkaProducer
    private let topic: String

    init(bootstrapServers: String, topic: String, lingerMs: Int = 2) throws {
        producer = try KafkaProducer(configuration: ["bootstrap.servers": bootstrapServers, "linger.ms": String(lingerMs),
                                                     "queue.buffering.max.messages": "1000000"])
        self.topic = topic
    }

    /// Sends `items` at `ratePerSecond`; returns the send time (epoch ms) of each, in order, and
    /// how far behind schedule the sender fell at worst (ms).
    func run(_ items: [RequestPool.Item], ratePerSecond: Double) -> (sentAtMs: [Int64], maxLagMs: Int64) {
        var sent = [Int64](repeating: 0, count: items.count)
        let start = Timestamps.monotonicMicroseconds()
        let wallStart = Timestamps.nowMs()
        let interval = 1_000_000 / ratePerSecond
        var maxLag: Int64 = 0
        for (index, item) in items.enumerated() {
            let due = start + Int64(Double(index) * interval)
            let now = Timestamps.monotonicMicroseconds()
            if due > now + 200 { usleep(useconds_t(due - now)) } else { maxLag = max(maxLag, (now - due) / 1000) }
            let message = KafkaOutgoingMessage(topic: topic, key: item.key, value: item.value)
            while true {
                do {
                    try producer.send(message) { _ in }
                    break
                } catch where error.code == .queueFull {
                    usleep(500)
                } catch {
                    break
                }
            }
            sent[index] = wallStart + (Timestamps.monotonicMicroseconds() - start) / 1000
        }
        _ = producer.flush(timeoutMs: 10_000)
        return (sent, maxLag)
    }

    func close() { producer.close(timeoutMs: 5_000) }
}
