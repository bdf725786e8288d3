import Dispatch
import Foundation
import HTTP
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension HTTPTests {
    /// Streaming answers (`HTTPServerResponse.stream`, for Server-Sent Events): bytes reach the
    /// client while the response stays open, the connection costs no thread while idle, `close`
    /// ends it, a departed client finishes it, and `stop` ends open streams instead of hanging.
    @Suite(.timeLimit(.minutes(5))) struct EventStreams {
        /// A raw loopback client that keeps its connection and reads until a marker arrives.
        final class Reader {
            let descriptor: Int32
            var received: [UInt8] = []

            init(port: UInt16, path: String) {
                descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
                _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }

            deinit { close(descriptor) }

            var text: String { String(decoding: received, as: UTF8.self) }

            /// The body with the chunked framing removed (what an EventSource reads).
            var body: String {
                let bytes = received
                func crlf(from index: Int) -> Int? {
                    var i = index
                    while i + 1 < bytes.count { if bytes[i] == 13 && bytes[i + 1] == 10 { return i }; i += 1 }
                    return nil
                }
                var index = 0
                while let end = crlf(from: index), end != index { index = end + 2 }  // the header lines
                guard let headEnd = crlf(from: index) else { return "" }
                index = headEnd + 2
                var result: [UInt8] = []
                while let lineEnd = crlf(from: index), let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self), radix: 16), size > 0,
                      lineEnd + 2 + size <= bytes.count {
                    result += bytes[(lineEnd + 2)..<(lineEnd + 2 + size)]
                    index = lineEnd + 2 + size + 2
                }
                return String(decoding: result, as: UTF8.self)
            }

            /// Reads until `marker` is in what was received (true) or `timeoutMs` passes (false).
            func read(until marker: String, timeoutMs: Int) -> Bool {
                let deadline = Waiting.now() + Double(timeoutMs)
                var chunk = [UInt8](repeating: 0, count: 4096)
                while !text.contains(marker) {
                    guard Waiting.now() < deadline else { return false }
                    let count = recv(descriptor, &chunk, chunk.count, 0)
                    if count > 0 { received += chunk[0..<count] } else if count == 0 { return text.contains(marker) }
                }
                return true
            }

            /// Reads until the server closes the connection or `timeoutMs` passes; true when closed.
            func readToEnd(timeoutMs: Int) -> Bool {
                let deadline = Waiting.now() + Double(timeoutMs)
                var chunk = [UInt8](repeating: 0, count: 4096)
                while Waiting.now() < deadline {
                    let count = recv(descriptor, &chunk, chunk.count, 0)
                    if count == 0 { return true }
                    if count > 0 { received += chunk[0..<count] }
                }
                return false
            }
        }

        /// The streams the server handed out.
        final class Streams: Sendable {
            let list = Mutex<[HTTPEventStream]>([])
            var first: HTTPEventStream? { list.withLock { $0.first } }
            var all: [HTTPEventStream] { list.withLock { $0 } }
        }

        static func server(_ streams: Streams) throws -> HTTPServer {
            try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
                let stream = HTTPEventStream()
                streams.list.withLock { $0.append(stream) }
                responder.respond(HTTPServerResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/event-stream")],
                                                     body: Array("retry: 1000\n\n".utf8), stream: stream))
            }
        }

        @Test func bytesArriveWhileTheResponseStaysOpenAndCloseEndsIt() async throws {
            let streams = Streams()
            let server = try Self.server(streams)
            defer { server.stop() }
            let reader = Reader(port: server.port, path: "/events")
            #expect(reader.read(until: "retry: 1000\n\n", timeoutMs: 5_000), "the body given with the response: \(reader.text)")
            #expect(reader.text.lowercased().contains("transfer-encoding: chunked") && !reader.text.lowercased().contains("content-length"))
            let stream = try #require(streams.first)
            for index in 1...3 {
                // Each event is seen before the next is sent: the response is open, not buffered to the end.
                try await Task.sleep(for: .milliseconds(100))
                stream.send(Array("data: event \(index)\n\n".utf8))
                #expect(reader.read(until: "data: event \(index)\n\n", timeoutMs: 5_000), "event \(index): \(reader.text)")
            }
            #expect(!stream.isFinished)
            stream.close()
            #expect(reader.read(until: "0\r\n\r\n", timeoutMs: 5_000), "the chunked body ends: \(reader.text.suffix(80))")
            #expect(await Waiting.until(timeoutMs: 5_000) { stream.isFinished })
            stream.send(Array("data: late\n\n".utf8))
            #expect(!reader.text.contains("late"))
        }

        @Test func manySendsFromOtherThreadsArriveInOrder() async throws {
            let streams = Streams()
            let server = try Self.server(streams)
            defer { server.stop() }
            let reader = Reader(port: server.port, path: "/events")
            #expect(reader.read(until: "retry: 1000\n\n", timeoutMs: 5_000))
            let stream = try #require(streams.first)
            let queue = DispatchQueue(label: "sender")
            for index in 0..<500 {
                queue.async { stream.send(Array("data: \(index)\n\n".utf8)) }
                if index % 50 == 0 { try await Task.sleep(for: .milliseconds(5)) }
            }
            queue.async { stream.close() }
            #expect(reader.read(until: "\r\n0\r\n\r\n", timeoutMs: 10_000), "the chunked body ends (the connection stays for keep-alive)")
            let events = reader.body.components(separatedBy: "\n\n").filter { !$0.isEmpty }.dropFirst().map { Int($0.dropFirst(6)) }
            #expect(events == Array(0..<500).map(Optional.some), "\(events.count) events, first \(events.prefix(3))")
        }

        @Test func aDepartedClientFinishesTheStream() async throws {
            let streams = Streams()
            let server = try Self.server(streams)
            defer { server.stop() }
            do {
                let reader = Reader(port: server.port, path: "/events")
                #expect(reader.read(until: "retry: 1000\n\n", timeoutMs: 5_000))
            }
            let stream = try #require(streams.first)
            // A suspended connection does not notice the close; the next sends do.
            #expect(await Waiting.until(timeoutMs: 10_000) {
                stream.send(Array(repeating: UInt8(ascii: ":"), count: 1024) + Array("\n\n".utf8))
                usleep(20_000)
                return stream.isFinished
            })
            #expect(server.openConnectionCount == 0)
        }

        @Test func stopEndsOpenStreamsAndReturns() async throws {
            let streams = Streams()
            let server = try Self.server(streams)
            let readers = (0..<5).map { _ in Reader(port: server.port, path: "/events") }
            for reader in readers { #expect(reader.read(until: "retry: 1000\n\n", timeoutMs: 5_000)) }
            #expect(streams.all.count == 5)
            let started = Waiting.now()
            server.stop()
            #expect(Waiting.now() - started < 5_000, "stop returned")
            for reader in readers { #expect(reader.readToEnd(timeoutMs: 5_000), "each stream ended") }
            #expect(streams.all.allSatisfy { $0.isFinished })
        }
    }
}
