import Contract
import Harness

/// What every pipeline scenario sets up: the stack (broker, simulator, one worker), a producer,
/// a result tracker, a request factory, a measured phase, and a warm-up.
final class BenchRig {
    let stack: BenchStack
    let worker: ChildProcess
    let producer: OpenLoopProducer
    let tracker: ResultTracker
    let factory: RequestFactory
    let phase: BenchPhase

    /// Starts everything with the simulator `profile` and the worker's configuration edited by `adjust`.
    /// `wrapper` runs the worker under another program (valgrind), ready within `readyTimeoutMs`;
    /// the requests' reply keys are on `replyCurve`.
    init(partitions: Int, profile: JSONValue, groupID: String, resultFetchWaitMs: Int = 10, wrapper: [String] = [],
         readyTimeoutMs: Int64 = 30_000, replyCurve: JWKCurve = .p256, adjust: (inout [String: JSONValue]) -> Void) throws {
        stack = try BenchStack(partitions: partitions, profile: profile)
        do {
            worker = try stack.startWorker(groupID: groupID, wrapper: wrapper, readyTimeoutMs: readyTimeoutMs, adjust: adjust)
            producer = try OpenLoopProducer(bootstrapServers: stack.bootstrapServers, topic: stack.topics.requests)
            tracker = try ResultTracker(bootstrapServers: stack.bootstrapServers, topic: stack.topics.results, partitions: partitions,
                                        fetchWaitMs: resultFetchWaitMs)
            // Eight Apple-like chains shared by all handshakes, each renewed every 5,000 Apple requests.
            factory = try RequestFactory(devices: 8, replyKeyPool: 64, rotateChainEvery: 5_000, replyCurve: replyCurve)
            phase = BenchPhase(stack: stack, producer: producer, tracker: tracker)
            try PipelineBench.warmUp(phase, factory: factory, partitions: partitions)
        } catch {
            stack.stop()
            throw error
        }
    }

    /// Stops the producer, the tracker and every process.
    func stop() {
        producer.close()
        tracker.stop()
        stack.stop()
    }
}
