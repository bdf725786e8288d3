#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock helpers shared by logs and metrics (no Foundation on the hot path).
public enum Timestamps {
    /// Milliseconds since the Unix epoch, from the real-time clock.
    public static func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Microseconds on the monotonic clock (for durations only).
    public static func monotonicMicroseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
    }

    /// `2026-11-29T10:00:00.000Z` for a time in milliseconds since the epoch.
    public static func rfc3339(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        let millis = Int(milliseconds % 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}
