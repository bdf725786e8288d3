#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket on 127.0.0.1 for provoking connect failures; closed in `deinit` unless handed over.
final class LoopbackSocket {
    let descriptor: Int32
    let port: UInt16
    private let ownsDescriptor: Bool

    /// A socket bound to a free port but not listening: connecting to `port` is refused.
    static func boundNotListening() -> LoopbackSocket {
        LoopbackSocket(listenBacklog: nil)
    }

    /// A socket listening on a free port (backlog 128).
    static func listening() -> LoopbackSocket {
        LoopbackSocket(listenBacklog: 128, ownsDescriptor: false)
    }

    /// A listening socket whose accept queue (backlog 0) is filled by one connection nobody
    /// accepts: further SYNs are dropped, so a connect to `port` hangs until it times out.
    static func listeningWithFullBacklog() -> (listener: LoopbackSocket, filler: Int32) {
        let listener = LoopbackSocket(listenBacklog: 0)
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = LoopbackSocket.address(port: listener.port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(connected == 0, "filler connect failed: errno \(errno)")
        return (listener, filler)
    }

    private init(listenBacklog: Int32?, ownsDescriptor: Bool = true) {
        self.ownsDescriptor = ownsDescriptor
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        precondition(descriptor >= 0, "socket failed: errno \(errno)")
        self.descriptor = descriptor
        var address = LoopbackSocket.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(bound == 0, "bind failed: errno \(errno)")
        if let listenBacklog { precondition(listen(descriptor, listenBacklog) == 0, "listen failed: errno \(errno)") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    private static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
