#if canImport(Glibc)
import Glibc
#endif

/// Sends hand-written bytes to a loopback port and reads until the peer closes or `timeoutMs`.
enum RawClient {
    /// The raw answer to `request` from 127.0.0.1:`port`.
    static func exchange(port: UInt16, request: [UInt8], timeoutMs: Int = 2_000) -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return "" }
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { break }
            answer += chunk[0..<count]
            if String(decoding: answer, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
