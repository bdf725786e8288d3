#if canImport(Glibc)
import Glibc
#endif

/// Reads this process's `/proc/self/status`.
enum ProcessStatus {
    /// The number of threads in this process right now.
    static func threadCount() -> Int {
        guard let file = fopen("/proc/self/status", "re") else { return -1 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if line.hasPrefix("Threads:") {
                return Int(String(line.dropFirst("Threads:".count).filter(\.isNumber))) ?? -1
            }
        }
        return -1
    }
}
