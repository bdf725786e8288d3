#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process resource limits that a server or client holding thousands of sockets needs raised.
public enum ResourceLimits {
    /// The current soft limit on open file descriptors.
    public static var openFileLimit: Int {
        var limit = rlimit()
        guard getrlimit(resourceNoFile, &limit) == 0 else { return 0 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft open-file limit to the hard limit and returns the resulting soft limit.
    ///
    /// Each in-flight request holds a socket (two on loopback when the server is in the same
    /// process); 2,000 in flight needs well over the common default of 1,024. Call once at start.
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(resourceNoFile, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            _ = setrlimit(resourceNoFile, &raised)
        }
        return openFileLimit
    }

    #if canImport(Glibc)
    private static var resourceNoFile: __rlimit_resource_t { __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue)) }
    #else
    private static var resourceNoFile: Int32 { RLIMIT_NOFILE }
    #endif
}
