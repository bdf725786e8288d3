/// Every thread, queue and timer the worker's core uses, behind one seam (the "scheduling" port
/// of the deterministic simulation): `DispatchExecutor` in production, the simulation's seeded
/// event queue in `SimulationTests`, where every closure runs on one thread in an order drawn
/// from the seed. The core never creates a thread, queue or timer any other way.
package protocol Executor: Sendable {
    /// The concurrent worker pool (decode, validate, seal, build calls).
    var pool: any WorkQueue { get }
    /// A serial queue; `onPool` queues share the pool's threads (one per requests partition).
    func serialQueue(label: String, onPool: Bool) -> any WorkQueue
    /// A timer whose handler runs on its own serial queue.
    func timer(label: String) -> any WorkTimer
    /// Starts a consumer loop named `name`: `turn` runs again and again (each one polls once and
    /// carries out what the poll brought) until it returns false.
    func startLoop(name: String, turn: @escaping @Sendable () -> Bool) -> any LoopHandle
}
