#if canImport(Glibc)
import Glibc
#endif

/// Polls a condition every millisecond until it holds or `timeoutMs` passes.
enum Waiting {
    /// True when `condition` became true within `timeoutMs`.
    static func until(timeoutMs: Int, _ condition: () -> Bool) async -> Bool {
        let deadline = now() + Double(timeoutMs)
        while now() < deadline {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return condition()
    }

    /// Monotonic milliseconds.
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
    }
}
