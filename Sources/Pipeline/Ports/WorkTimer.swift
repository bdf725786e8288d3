/// One reusable timer armed for the earliest moment asked for (`DispatchTimer` in production).
package protocol WorkTimer: AnyObject, Sendable {
    /// Sets what runs when the timer fires.
    func setHandler(_ handler: @escaping @Sendable () -> Void)
    /// Arms the timer for `atMs` (the worker's clock), unless it already fires at or before then.
    func schedule(atMs: Int64?, nowMs: Int64)
    /// Stops the timer for good.
    func cancel()
}
