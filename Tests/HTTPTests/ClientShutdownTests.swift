import HTTP
import Synchronization
import Testing

extension HTTPTests {
    /// `HTTPClient.shutdown` fails everything pending, promptly.
    @Suite(.timeLimit(.minutes(5))) struct ClientShutdown {
        @Test func shutdownFailsPendingRequestsPromptly() async throws {
            let received = Atomic<Int>(0)
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, _ in received.add(1, ordering: .relaxed) }
            defer { server.stop() }
            let client = HTTPClient()
            let failures = Mutex<[HTTPTransportError]>([])
            for _ in 0..<10 {
                client.execute(HTTPClientRequest(method: "POST", url: Fixtures.url(server, "/hang"), body: [1], timeoutMs: 10_000)) { result in
                    if case .failure(let error) = result { failures.withLock { $0.append(error) } }
                }
            }
            #expect(await Waiting.until(timeoutMs: 5_000) { received.load(ordering: .relaxed) == 10 })
            let started = Waiting.now()
            client.shutdown()
            let took = Waiting.now() - started
            // Promptly: far below the requests' own 10 s timeouts, with room for a busy machine.
            #expect(took < 2_000, "shutdown took \(took) ms")
            let errors = failures.withLock { $0 }
            #expect(errors.count == 10)
            #expect(errors.allSatisfy { $0.kind == .other && $0.requestMayHaveBeenSent })
            #expect(client.inFlightCount == 0)

            let after = await client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/"), timeoutMs: 1_000))
            guard case .failure(let error) = after else { Issue.record("expected a failure after shutdown"); return }
            #expect(error.kind == .other)
            #expect(!error.requestMayHaveBeenSent)
            client.shutdown()
        }

        @Test func shutdownFromACompletionCallbackDoesNotDeadlock() async throws {
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, responder in responder.respond(.text(200, "")) }
            defer { server.stop() }
            let client = HTTPClient()
            let done = Atomic<Bool>(false)
            client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/"), timeoutMs: 2_000)) { _ in
                client.shutdown()
                done.store(true, ordering: .relaxed)
            }
            #expect(await Waiting.until(timeoutMs: 2_000) { done.load(ordering: .relaxed) })
        }
    }
}
