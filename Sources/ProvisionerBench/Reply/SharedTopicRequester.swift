import Contract
import Foundation
import Kafka
import ProvisionerClient
import Synchronization

/// The shared-topic way a backend instance gets its answers without reply routing (the baseline
/// of `bench reply`): produce the request without reply headers, read every partition of the
/// default results topic (hand-assigned at their ends), keep only its own request ids, decrypt.
///
/// Threads: one poll thread reads and resolves waits; callers `await` `provision`.
final class SharedTopicRequester: Sendable {
    private let producer: KafkaProducer
    private let consumer: KafkaConsumer
    private let requestsTopic: String
    private let key: ECPrivateKey
    private let publicKey: ECPublicJWK
    private let waiters = Mutex<[String: @Sendable (ProvisioningResult) -> Void]>([:])
    private let readCount = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(bootstrapServers: String, requestsTopic: String, resultsTopic: String, fetchWaitMs: Int) throws {
        key = try ECPrivateKey.generate()
        publicKey = try key.publicKey
        self.requestsTopic = requestsTopic
        producer = try KafkaProducer(configuration: ["bootstrap.servers": bootstrapServers, "linger.ms": "1"])
        consumer = try KafkaConsumer(configuration: ["bootstrap.servers": bootstrapServers, "group.id": "unused-shared",
                                                     "enable.auto.commit": "false", "fetch.wait.max.ms": String(fetchWaitMs)],
                                     rebalanceListener: nil)
        let count = try consumer.partitionCount(topic: resultsTopic, timeoutMs: 10_000)
        var assignment: [TopicPartitionOffset] = []
        for partition in 0..<Int32(count) {
            let tp = TopicPartition(topic: resultsTopic, partition: partition)
            assignment.append(TopicPartitionOffset(tp, offset: try consumer.watermarks(tp, timeoutMs: 10_000).high))
        }
        try consumer.assign(assignment)
        let thread = Thread { [self] in run() }
        thread.name = "shared-results-reader"
        thread.start()
    }

    private func run() {
        while !stopping.load(ordering: .acquiring) {
            for item in consumer.poll(maxMessages: 1_024, timeoutMs: 50) {
                guard case .success(let message) = item else { continue }
                readCount.add(1, ordering: .relaxed)
                guard let key = message.key, let waiter = waiters.withLock({ $0[String(decoding: key, as: UTF8.self)] }),
                      let result = try? ProvisioningResult.decode(message.value), result.isFinal else { continue }
                waiters.withLock { $0[result.requestID] = nil }
                waiter(result)
            }
        }
        consumer.close()
        finished.signal()
    }

    /// Sends `request` and waits for its final result, then decrypts its payload; true when it decrypted.
    func provision(_ request: ClientRequest) async -> Bool? {
        let value = request.encodedJSON(replyKey: publicKey)
        let message = KafkaOutgoingMessage(topic: requestsTopic, key: Array(request.cardID.utf8), value: value)
        let result: ProvisioningResult = await withCheckedContinuation { continuation in
            waiters.withLock { $0[request.requestID] = { continuation.resume(returning: $0) } }
            while true {
                do throws(KafkaError) {
                    try producer.send(message) { _ in }
                    break
                } catch where error.code == .queueFull {
                    usleep(1_000)
                } catch {
                    break
                }
            }
        }
        guard let payload = result.payload, let plain = try? JWE.decrypt(payload, with: key) else { return false }
        return (try? ProvisioningPayload.decode(plaintext: plain, wallet: request.wallet)) != nil
    }

    /// Messages read from the results topic.
    var read: Int { readCount.load(ordering: .relaxed) }

    func close() {
        stopping.store(true, ordering: .releasing)
        finished.wait()
        producer.close(timeoutMs: 5_000)
    }
}
