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

extension RequestConsumer: WorkerService {}
extension ReconcileRunner: WorkerService {}
