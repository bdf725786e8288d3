import Contract
import Foundation
import Harness
import Kafka
import Observability
import Synchronization

/// Produces requests at a steady rate on a task of its own, each made just before it is sent (so
/// its deadline window starts then), and remembers what was sent and acknowledged.
final class LoadGenerator: Sendable {
    struct Sent: Sendable {
        var request: GeneratedRequest
        var partition: Int32
        var sentAtMs: Int64
    }

    private let state = Mutex<(sent: [Sent], delivered: Set<String>, failed: [String: String], stop: Bool)>(([], [], [:], false))
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts sending `total` requests (nil: until `stop()`) at `perSecond`, request `index` made by `make`.
    init(producer: KafkaProducer, topic: String, partitions: Int, perSecond: Double, total: Int?,
         make: @escaping @Sendable (Int) throws -> GeneratedRequest) {
        let running = Task.detached { [self] in
            let start = Timestamps.nowMs()
            var index = 0
            while total.map({ index < $0 }) ?? true, !self.state.withLock({ $0.stop }) {
                let due = start + Int64(Double(index) * 1000 / perSecond)
                let wait = due - Timestamps.nowMs()
                if wait > 0 { try? await Task.sleep(for: .milliseconds(wait)) }
                defer { index += 1 }
                guard let request = try? make(index) else { continue }
                let partition = Int32(index % partitions)
                let id = request.requestID
                let message = KafkaOutgoingMessage(topic: topic, key: request.key, value: request.value, partition: partition)
                while true {
                    do throws(KafkaError) {
                        try producer.send(message) { result in
                            self.state.withLock { state in
                                switch result {
                                case .success: state.delivered.insert(id)
                                case .failure(let error): state.failed[id] = error.description
                                }
                            }
                        }
                        break
                    } catch where error.code == .queueFull {
                        try? await Task.sleep(for: .milliseconds(5))
                    } catch {
                        self.state.withLock { $0.failed[id] = error.description }
                        break
                    }
                }
                self.state.withLock { $0.sent.append(Sent(request: request, partition: partition, sentAtMs: Timestamps.nowMs())) }
            }
        }
        task.withLock { $0 = running }
    }

    /// Everything sent so far.
    var sent: [Sent] { state.withLock { $0.sent } }
    /// Request ids Kafka acknowledged.
    var delivered: Set<String> { state.withLock { $0.delivered } }
    /// Request ids whose produce failed, with why.
    var failed: [String: String] { state.withLock { $0.failed } }

    /// Asks the generator to stop and waits for it.
    func stop() async {
        state.withLock { $0.stop = true }
        await task.withLock { $0 }?.value
    }

    /// Waits until every request was sent (a finite load).
    func finish() async {
        await task.withLock { $0 }?.value
    }
}
