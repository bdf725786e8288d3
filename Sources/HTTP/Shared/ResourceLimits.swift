import CPosix
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

    /// Sets the core file size limit to 0 (soft and hard): a crash writes no memory image, with
    /// the keys and payloads it holds, to disk. Returns whether the limit is 0 now.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        _ = provisioner_disable_core_dumps()
        return coreFileLimit == 0
    }

    /// The current soft limit on core file size (bytes).
    public static var coreFileLimit: Int {
        var limit = rlimit()
        guard getrlimit(resourceCore, &limit) == 0 else { return -1 }
        return Int(clamping: limit.rlim_cur)
    }

    #if canImport(Glibc)
    private static var resourceCore: __rlimit_resource_t { __rlimit_resource_t(UInt32(RLIMIT_CORE.rawValue)) }
    #else
    private static var resourceCore: Int32 { RLIMIT_CORE }
    #endif

    #if canImport(Glibc)
    private static var resourceNoFile: __rlimit_resource_t { __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue)) }
    #else
    private static var resourceNoFile: Int32 { RLIMIT_NOFILE }
    #endif
}
