/// Polling for a condition that other threads make true, for tests.
public enum Eventually {
    /// True once `condition` holds, checked every `interval` for up to `timeout`; false if it still
    /// does not hold once the time is up.
    ///
    /// The condition is checked after every sleep before the clock is: the unit suites run in
    /// parallel on a few task threads, and a waiting task can resume seconds after its sleep ended,
    /// past its deadline. Checking the deadline first would then report as failed a condition that
    /// came true meanwhile.
    public static func holds(within timeout: Duration, every interval: Duration = .milliseconds(10),
                             _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if condition() { return true }
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: interval)
        }
    }
}
