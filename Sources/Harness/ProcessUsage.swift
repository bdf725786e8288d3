#if canImport(Glibc)
import Glibc
#endif

/// CPU time, threads and memory of this process, and a monotonic clock.
struct ProcessUsage {
    /// User CPU time consumed so far, in microseconds.
    var userMicroseconds: Int64
    /// System CPU time consumed so far, in microseconds.
    var systemMicroseconds: Int64

    /// User plus system CPU time, in microseconds.
    var totalMicroseconds: Int64 { userMicroseconds + systemMicroseconds }

    /// `getrusage(RUSAGE_SELF)` now.
    static func now() -> ProcessUsage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return ProcessUsage(
            userMicroseconds: Int64(usage.ru_utime.tv_sec) * 1_000_000 + Int64(usage.ru_utime.tv_usec),
            systemMicroseconds: Int64(usage.ru_stime.tv_sec) * 1_000_000 + Int64(usage.ru_stime.tv_usec))
    }

    /// Monotonic milliseconds.
    static func monotonicMilliseconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
    }

    /// `Threads:` from `/proc/self/status`.
    static func threadCount() -> Int { statusField("Threads:") }

    /// `VmRSS:` from `/proc/self/status`, in MiB.
    static func residentMegabytes() -> Double { Double(statusField("VmRSS:")) / 1024 }

    /// `VmHWM:` (peak resident set) from `/proc/self/status`, in MiB.
    static func peakResidentMegabytes() -> Double { Double(statusField("VmHWM:")) / 1024 }

    /// The 1-minute load average, or -1 when unknown.
    static func loadAverage() -> Double {
        var loads = [Double](repeating: -1, count: 3)
        return getloadavg(&loads, 3) > 0 ? loads[0] : -1
    }

    private static func statusField(_ name: String) -> Int {
        guard let file = fopen("/proc/self/status", "r") else { return -1 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            guard line.hasPrefix(name) else { continue }
            let digits = line.dropFirst(name.count).filter(\.isNumber)
            return Int(digits) ?? -1
        }
        return -1
    }
}
