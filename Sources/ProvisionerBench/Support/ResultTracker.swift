import Contract
import Foundation
import Kafka
import Observability
import Pipeline
import Synchronization

/// Reads the results topic from its current end and records, for every request id it was told
/// about, when its first and final results were consumed, the final status, and the issuer time.
/// Results another worker writes (`bench compare`'s peer) are read by their `request_id`,
/// `status`, `final` and `timing.issuer_ms` alone when they are not contract results.
final class ResultTracker: Sendable {
    /// What the tracker needs of one result.
    struct Seen {
        var requestID: String
        var status: ResultStatus
        var isFinal: Bool
        var timing: ResultTiming

        init(_ result: ProvisioningResult) {
            (requestID, status, isFinal, timing) = (result.requestID, result.status, result.isFinal, result.timing)
        }

        /// A result that is not a contract result: `request_id` and `status` required, `final` true when absent.
        init?(peerResult bytes: [UInt8]) {
            guard let value = try? JSONParser().parse(bytes), let id = value["request_id"]?.stringValue,
                  let status = value["status"]?.stringValue.flatMap(ResultStatus.init(rawValue:)) else { return nil }
            (requestID, self.status) = (id, status)
            isFinal = value["final"]?.boolValue ?? true
            timing = ResultTiming(issuerMs: value["timing"]?["issuer_ms"]?.int64Value)
        }
    }

    struct Record: Sendable {
        var firstConsumedAtMs: Int64 = 0
        var finalConsumedAtMs: Int64 = 0
        var status: ResultStatus?
        /// The status of the first result (an `indeterminate` here was later reconciled).
        var firstStatus: ResultStatus?
        var issuerMs: Int64 = 0
        var publishedAtMs: Int64 = 0
        var deadlineMs: Int64 = 0
        var receivedAtMs: Int64 = 0
    }

    private let consumer: KafkaConsumer
    private let state = Mutex<(index: [String: Int], records: [Record], finals: Int)>(([:], [], 0))
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `topic` (all `partitions`) from its end.
    init(bootstrapServers: String, topic: String, partitions: Int, fetchWaitMs: Int = 10) throws {
        consumer = try KafkaConsumer(configuration: ["bootstrap.servers": bootstrapServers, "group.id": "bench-\(UUID().uuidString)",
                                                     "fetch.wait.max.ms": String(fetchWaitMs), "enable.auto.commit": "false"],
                                     rebalanceListener: nil)
        var assignment: [TopicPartitionOffset] = []
        for partition in 0..<Int32(partitions) {
            let high = (try? consumer.watermarks(TopicPartition(topic: topic, partition: partition), timeoutMs: 5_000).high) ?? 0
            assignment.append(TopicPartitionOffset(topic: topic, partition: partition, offset: high, metadata: nil))
        }
        try consumer.assign(assignment)
        let thread = Thread { [self] in run() }
        thread.name = "bench-results"
        thread.start()
    }

    /// Registers the request ids to follow (before they are produced).
    func track(_ requestIDs: [String]) {
        state.withLock { state in
            for id in requestIDs {
                state.index[id] = state.records.count
                state.records.append(Record())
            }
        }
    }

    private func run() {
        while !stopFlag.load(ordering: .relaxed) {
            let batch = consumer.poll(maxMessages: 2_000, timeoutMs: 20)
            guard !batch.isEmpty else { continue }
            let now = Timestamps.nowMs()
            var decoded: [Seen] = []
            for case .success(let message) in batch {
                if let result = try? ProvisioningResult.decode(message.value) {
                    decoded.append(Seen(result))
                } else if let seen = Seen(peerResult: message.value) {
                    decoded.append(seen)
                }
            }
            state.withLock { state in
                for result in decoded {
                    guard let position = state.index[result.requestID] else { continue }
                    if state.records[position].firstConsumedAtMs == 0 {
                        state.records[position].firstConsumedAtMs = now
                        state.records[position].firstStatus = result.status
                        state.records[position].issuerMs = result.timing.issuerMs ?? 0
                        state.records[position].publishedAtMs = result.timing.publishedAtMs ?? 0
                        state.records[position].deadlineMs = result.timing.deadlineMs ?? 0
                        state.records[position].receivedAtMs = result.timing.receivedAtMs ?? 0
                    }
                    if result.isFinal && state.records[position].finalConsumedAtMs == 0 {
                        state.records[position].finalConsumedAtMs = now
                        state.records[position].status = result.status
                        state.finals += 1
                    }
                }
            }
        }
        consumer.close()
        done.signal()
    }

    /// Requests with a final result so far.
    var finalCount: Int { state.withLock { $0.finals } }

    /// Records of `requestIDs`, in that order.
    func records(_ requestIDs: [String]) -> [Record] {
        state.withLock { state in requestIDs.map { state.index[$0].map { state.records[$0] } ?? Record() } }
    }

    /// Waits until every id in `requestIDs` has a final result, or `timeoutMs`.
    func waitForFinals(_ requestIDs: [String], timeoutMs: Int64) -> Bool {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            let missing = state.withLock { state in requestIDs.contains { id in state.index[id].map { state.records[$0].finalConsumedAtMs == 0 } ?? true } }
            if !missing { return true }
            usleep(50_000)
        }
        return false
    }

    func stop() {
        guard !stopFlag.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }
}
