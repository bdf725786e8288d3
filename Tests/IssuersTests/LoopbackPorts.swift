#if canImport(Glibc)
import Glibc
#endif

/// Loopback TCP sockets that make connects fail in a chosen way; closed in `deinit`.
final class LoopbackPorts {
    let port: UInt16
    private var descriptors: [Int32]

    /// A port bound but not listening: every connect is refused at once (nothing is ever sent).
    static func refusing() -> LoopbackPorts {
        let descriptor = makeSocket()
        return LoopbackPorts(port: boundPort(descriptor), descriptors: [descriptor])
    }

    /// A listener whose accept queue (backlog 0) is already full with a connection nobody
    /// accepts: further SYNs are dropped, so a connect hangs until the client's connect timeout.
    static func silentlyDropping() -> LoopbackPorts {
        let listener = makeSocket()
        let port = boundPort(listener)
        precondition(listen(listener, 0) == 0, "listen failed: errno \(errno)")
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(connected == 0, "filler connect failed: errno \(errno)")
        return LoopbackPorts(port: port, descriptors: [listener, filler])
    }

    private init(port: UInt16, descriptors: [Int32]) {
        self.port = port
        self.descriptors = descriptors
    }

    deinit {
        for descriptor in descriptors { close(descriptor) }
    }

    private static func makeSocket() -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        precondition(descriptor >= 0, "socket failed: errno \(errno)")
        return descriptor
    }

    private static func boundPort(_ descriptor: Int32) -> UInt16 {
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(bound == 0, "bind failed: errno \(errno)")
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: actual.sin_port)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
