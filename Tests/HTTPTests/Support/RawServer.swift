import CPosix
import Foundation
import Synchronization

/// A hand-rolled loopback HTTP/1.1 peer that misbehaves on purpose, one thread per connection.
///
/// `closingAfterRequest`: reads each request, then closes without a byte of answer.
/// `answeringOnceThenClosing`: answers the first request on a connection (keep-alive), then reads
/// the second one and closes without answering — what a crashing or restarting server looks like
/// to a client reusing the connection.
final class RawServer: Sendable {
    enum Mode: Sendable { case closingAfterRequest, answeringOnceThenClosing }

    let port: UInt16
    private let listener: Int32
    private let mode: Mode
    private let requests = Atomic<Int>(0)

    /// Requests read in full so far, all connections together.
    var requestsReceived: Int { requests.load(ordering: .relaxed) }

    static func closingAfterRequest() throws -> RawServer { try RawServer(mode: .closingAfterRequest) }
    static func answeringOnceThenClosing() throws -> RawServer { try RawServer(mode: .answeringOnceThenClosing) }

    private init(mode: Mode) throws {
        self.mode = mode
        let socket = LoopbackSocket.listening()
        listener = socket.descriptor
        port = socket.port
        let server = self
        Thread.detachNewThread { server.acceptLoop() }
    }

    /// Stops accepting: wakes the accept loop, which closes the listener (its only owner), so the
    /// loop never calls `accept` on a number that was closed and reused elsewhere.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let connection = accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let server = self
            Thread.detachNewThread { server.serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var buffered: [UInt8] = []
        var served = 0
        while readRequest(connection, &buffered) {
            requests.add(1, ordering: .relaxed)
            served += 1
            if mode == .closingAfterRequest || served > 1 { return }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok".utf8)
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// Reads one request (headers and Content-Length body) from `buffered` plus the socket.
    private func readRequest(_ connection: Int32, _ buffered: inout [UInt8]) -> Bool {
        let separator = Array("\r\n\r\n".utf8)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let end = buffered.firstRange(of: separator) {
                let head = String(decoding: buffered[..<end.lowerBound], as: UTF8.self).lowercased()
                let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int(String($0.dropFirst("content-length:".count).filter(\.isNumber))) } ?? 0
                if buffered.count >= end.upperBound + length {
                    buffered.removeFirst(end.upperBound + length)
                    return true
                }
            }
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return false }
            buffered.append(contentsOf: chunk[0..<count])
        }
    }
}
