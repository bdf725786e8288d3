#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads `CLOCK_MONOTONIC`: the clock for elapsed times and deadlines (never jumps with wall time).
enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point.
    static func nowNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Milliseconds elapsed since `start` (a `nowNanoseconds()` reading).
    static func millisecondsSince(_ start: UInt64) -> Double {
        Double(nowNanoseconds() &- start) / 1_000_000
    }
}
