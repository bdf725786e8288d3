/// A consumer loop started by an `Executor`: its poll turns run until one says to stop.
package protocol LoopHandle: Sendable {
    /// Blocks until the loop's last turn has returned.
    func waitUntilFinished()
}
