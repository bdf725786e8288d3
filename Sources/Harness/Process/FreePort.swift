#if canImport(Glibc)
import Glibc
#endif

/// Picks a free loopback TCP port (bound once to port 0, then released): for a child process that
/// needs its port given (a worker's `/metrics` in the benchmarks, a broker process in tests).
public enum FreePort {
    /// A loopback port nobody listened on at the moment of the call.
    public static func pick() throws(ChildProcessError) -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ChildProcessError("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        guard bound == 0 else { throw ChildProcessError("bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        guard named == 0 else { throw ChildProcessError("getsockname() failed") }
        return UInt16(bigEndian: address.sin_port)
    }
}
