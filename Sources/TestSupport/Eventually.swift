/// Polling for a condition that other threads make true, for tests.
public enum Eventually {
    /// True once `condition` holds, checked every `interval` for up to `timeout`; false if it still
    /// does not hold once the time is up.
    ///
    /// The unit suites run in parallel on a few task threads, which synchronous tests can hold for
    /// seconds; a waiting task then resumes long after its sleep ended, and so may every task that
    /// would make the condition true. So the condition is checked after every sleep before the
    /// clock is, and a sleep is charged to `timeout` for at most twice `interval`: the wait ends
    /// after `timeout` of time in which the waiter could look, not after a stall it slept through.
    public static func holds(within timeout: Duration, every interval: Duration = .milliseconds(10),
                             _ condition: () -> Bool) async throws -> Bool {
        let clock = ContinuousClock()
        var charged = Duration.zero
        while true {
            if condition() { return true }
            if charged >= timeout { return false }
            let slept = clock.now
            try await Task.sleep(for: interval)
            charged += min(clock.now - slept, interval * 2)
        }
    }
}
