/// Where the worker runs a piece of work later: a Dispatch queue in production, an event queue
/// of the deterministic simulation in tests. A serial queue runs its work one at a time, in order;
/// the pool runs work concurrently.
package protocol WorkQueue: Sendable {
    /// Runs `work` soon.
    func async(_ work: @escaping @Sendable () -> Void)
    /// Runs `work` after `milliseconds`.
    func asyncAfter(milliseconds: Int64, _ work: @escaping @Sendable () -> Void)
    /// Runs `work` on the queue and waits for it (never from the queue itself).
    func sync(_ work: @Sendable () -> Void)
}
