import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a Server-Sent Events response over one raw loopback connection (HTTPClient waits for a
/// body's end, which an event stream never reaches): returns what arrived once `events` update
/// events were seen, or at `timeoutMs`.
enum RawEventReader {
    static func read(port: UInt16, path: String, session: String, events: Int, timeoutMs: Int) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: blockingRead(port: port, path: path, session: session, events: events, timeoutMs: timeoutMs))
            }
        }
    }

    private static func blockingRead(port: UInt16, path: String, session: String, events: Int, timeoutMs: Int) -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return "" }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: __Host-console_session=\(session)\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1000)
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while Date() < deadline {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count == 0 { break }
            if count > 0 { received += chunk[0..<count] }
            if String(decoding: received, as: UTF8.self).components(separatedBy: "event: update").count - 1 >= events { break }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
