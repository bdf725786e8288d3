import Kafka

/// A long-running part of the worker (its consumer loops), with the shape of
/// swift-service-lifecycle's `Service`: start, ask to stop, wait until finished. `Worker` starts
/// them in a list and stops them in the reverse order.
protocol WorkerService: AnyObject, Sendable {
    /// Subscribes and starts its thread.
    func start() throws(KafkaError)
    /// Asks it to stop taking work and to finish what it holds within `drainMs` (idempotent; any thread).
    func requestStop(drainMs: Int64)
    /// Blocks until it has finished: drained, committed, left its group.
    func waitUntilFinished()
}

/// A `WorkerService` that is one `ConsumerLoop` over `topic`: its lifecycle is the loop's, and
/// `run` is the body of its poll thread.
protocol ConsumerLoopService: WorkerService {
    var loop: ConsumerLoop { get }
    var context: WorkerContext { get }
    /// The topic the loop subscribes to.
    var topic: String { get }
    /// The poll thread's name.
    var threadName: String { get }
    /// One poll turn; false once the loop has ended (after `loop.finish`).
    func turn() -> Bool
}

extension ConsumerLoopService {
    /// Subscribes and starts the poll thread.
    func start() throws(KafkaError) {
        try loop.start(topic: topic, threadName: threadName) { [self] in turn() }
    }

    /// Asks the loop to stop taking work, drain what it holds within `drainMs`, commit and leave.
    func requestStop(drainMs: Int64) {
        loop.requestStop(drainMs: drainMs, nowMs: context.clock())
    }

    /// Blocks until the loop has committed and left its group.
    func waitUntilFinished() {
        loop.waitUntilFinished()
    }
}

extension RequestConsumer: ConsumerLoopService {
    var topic: String { context.configuration.topics.requests }
    var threadName: String { "requests-poll" }
}

extension ReconcileRunner: ConsumerLoopService {
    var topic: String { context.configuration.topics.reconcile }
    var threadName: String { "reconcile-poll" }
}
