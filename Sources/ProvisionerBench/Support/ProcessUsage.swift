#if canImport(Glibc)
import Glibc
#endif

/// CPU time, threads and memory of this process (or another one, by pid), and a monotonic clock.
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

    /// CPU time of process `pid` so far, from `/proc/PID/stat` (user and system clock ticks).
    static func of(pid: Int32) -> ProcessUsage {
        guard let file = fopen("/proc/\(pid)/stat", "re") else { return ProcessUsage(userMicroseconds: 0, systemMicroseconds: 0) }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return ProcessUsage(userMicroseconds: 0, systemMicroseconds: 0) }
        let line = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
        guard let close = line.lastIndex(of: ")") else { return ProcessUsage(userMicroseconds: 0, systemMicroseconds: 0) }
        let fields = line[line.index(after: close)...].split(separator: " ")
        let ticks = Int64(sysconf(Int32(_SC_CLK_TCK)))
        func microseconds(_ index: Int) -> Int64 {
            index < fields.count ? (Int64(fields[index]) ?? 0) * 1_000_000 / max(ticks, 1) : 0
        }
        return ProcessUsage(userMicroseconds: microseconds(11), systemMicroseconds: microseconds(12))
    }

    /// `Threads:` from `/proc/PID/status` (this process by default).
    static func threadCount(pid: Int32? = nil) -> Int { statusField("Threads:", pid: pid) }

    /// `VmRSS:` from `/proc/PID/status`, in MiB.
    static func residentMegabytes(pid: Int32? = nil) -> Double { Double(statusField("VmRSS:", pid: pid)) / 1024 }

    /// `VmHWM:` (peak resident set) from `/proc/PID/status`, in MiB.
    static func peakResidentMegabytes(pid: Int32? = nil) -> Double { Double(statusField("VmHWM:", pid: pid)) / 1024 }

    /// The 1-minute load average, or -1 when unknown.
    static func loadAverage() -> Double {
        var loads = [Double](repeating: -1, count: 3)
        return getloadavg(&loads, 3) > 0 ? loads[0] : -1
    }

    private static func statusField(_ name: String, pid: Int32? = nil) -> Int {
        guard let file = fopen(pid.map { "/proc/\($0)/status" } ?? "/proc/self/status", "re") else { return -1 }
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
