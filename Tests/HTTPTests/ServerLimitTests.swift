import HTTP
import Synchronization
import Testing

extension HTTPTests {
    /// Server-side limits, binding and counters.
    @Suite(.timeLimit(.minutes(5))) struct ServerLimits {
        @Test func oversizeBodyGets413WithoutCallingTheHandler() async throws {
            let calls = Atomic<Int>(0)
            let server = try HTTPServer(host: "127.0.0.1", port: 0, maxBodyBytes: 1_024) { request, responder in
                calls.add(1, ordering: .relaxed)
                responder.respond(.text(200, "\(request.body.count)"))
            }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let tooLarge = try await client.execute(HTTPClientRequest(method: "POST", url: Fixtures.url(server, "/"), body: Fixtures.body(4_096), timeoutMs: 2_000)).get()
            #expect(tooLarge.status == 413)
            #expect(calls.load(ordering: .relaxed) == 0)
            let fits = try await client.execute(HTTPClientRequest(method: "POST", url: Fixtures.url(server, "/"), body: Fixtures.body(1_024), timeoutMs: 2_000)).get()
            #expect(fits.status == 200)
            #expect(fits.body == Array("1024".utf8))
            #expect(calls.load(ordering: .relaxed) == 1)
        }

        @Test func oversizeChunkedBodyGets413() throws {
            let calls = Atomic<Int>(0)
            let server = try HTTPServer(host: "127.0.0.1", port: 0, maxBodyBytes: 1_024) { _, responder in
                calls.add(1, ordering: .relaxed)
                responder.respond(.text(200, "ok"))
            }
            defer { server.stop() }
            let chunk = String(repeating: "a", count: 800)
            let request = "POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "320\r\n\(chunk)\r\n320\r\n\(chunk)\r\n0\r\n\r\n"
            let answer = RawClient.exchange(port: server.port, request: Array(request.utf8))
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(80))")
            #expect(calls.load(ordering: .relaxed) == 0)
            let small = "POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n320\r\n\(chunk)\r\n0\r\n\r\n"
            #expect(RawClient.exchange(port: server.port, request: Array(small.utf8)).hasPrefix("HTTP/1.1 200"))
            #expect(calls.load(ordering: .relaxed) == 1)
        }

        @Test func portZeroPicksAFreePortAndBusyPortFails() throws {
            let first = try HTTPServer(host: "127.0.0.1", port: 0) { _, responder in responder.respond(.text(200, "")) }
            defer { first.stop() }
            #expect(first.port != 0)
            #expect(throws: HTTPServerError.self) {
                _ = try HTTPServer(host: "127.0.0.1", port: first.port) { _, responder in responder.respond(.text(200, "")) }
            }
            do {
                _ = try HTTPServer(host: "not-an-address.invalid", port: 0) { _, responder in responder.respond(.text(200, "")) }
                Issue.record("expected invalidAddress")
            } catch {
                #expect(error.kind == .invalidAddress)
            }
        }

        @Test func ipv6LoopbackServes() async throws {
            let server = try HTTPServer(host: "::1", port: 0) { _, responder in responder.respond(.text(200, "six")) }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let response = try await client.execute(HTTPClientRequest(method: "GET", url: "http://[::1]:\(server.port)/", timeoutMs: 2_000)).get()
            #expect(response.body == Array("six".utf8))
        }

        @Test func stopIsIdempotentAndFreesThePort() async throws {
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, responder in responder.respond(.text(200, "")) }
            let port = server.port
            server.stop()
            server.stop()
            let again = try HTTPServer(host: "127.0.0.1", port: port) { _, responder in responder.respond(.text(200, "again")) }
            defer { again.stop() }
            #expect(again.port == port)
        }
    }
}
