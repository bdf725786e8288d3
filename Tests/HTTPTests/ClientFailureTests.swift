#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Synchronization
import Testing

extension HTTPTests {
    /// Each transport failure gets the right kind and the right `requestMayHaveBeenSent`.
    @Suite(.timeLimit(.minutes(5))) struct ClientFailures {
        private static func failure(_ result: Result<HTTPClientResponse, HTTPTransportError>,
                                    sourceLocation: SourceLocation = #_sourceLocation) -> HTTPTransportError? {
            switch result {
            case .success(let response):
                Issue.record("expected a failure, got status \(response.status)", sourceLocation: sourceLocation)
                return nil
            case .failure(let error):
                return error
            }
        }

        @Test func timeoutAgainstSilentServerIsHonouredAndMayHaveBeenSent() async throws {
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, _ in }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            // Warm the connection so the budget is spent waiting for the answer, not connecting.
            for budget in [300, 300, 150] {
                let error = try #require(Self.failure(await client.execute(HTTPClientRequest(
                    method: "POST", url: Fixtures.url(server, "/hang"), body: Fixtures.body(100), timeoutMs: budget))))
                #expect(error.kind == .timedOut)
                #expect(error.requestMayHaveBeenSent)
                // Never early (a busy machine only makes timers late); late by at most a second of
                // scheduling delay, where ignoring the budget would wait for the server forever.
                #expect(error.elapsedMs >= Double(budget) - 1 && error.elapsedMs < Double(budget) + 1_000,
                        "budget \(budget) ms, took \(error.elapsedMs) ms")
                #expect(error.message.contains("reconcile"))
            }
        }

        @Test func refusedConnectionWasNotSent() async throws {
            let closed = LoopbackSocket.boundNotListening()
            let client = HTTPClient()
            defer { client.shutdown() }
            let error = try #require(Self.failure(await client.execute(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(closed.port)/x", body: [1, 2, 3], timeoutMs: 2_000))))
            #expect(error.kind == .connectFailed)
            #expect(!error.requestMayHaveBeenSent)
            #expect(error.elapsedMs < 1_000)
        }

        @Test func unresolvableHostWasNotSent() async throws {
            let client = HTTPClient()
            defer { client.shutdown() }
            let error = try #require(Self.failure(await client.execute(HTTPClientRequest(
                method: "GET", url: "http://host.that.does-not-exist.invalid/", timeoutMs: 3_000))))
            #expect(!error.requestMayHaveBeenSent)
            #expect(error.kind == .connectFailed || error.kind == .timedOut)
        }

        @Test func timeoutWhileStillConnectingWasNotSent() async throws {
            let (listener, filler) = LoopbackSocket.listeningWithFullBacklog()
            defer { close(filler) }
            let client = HTTPClient(configuration: HTTPClientConfiguration(connectTimeoutMs: 5_000))
            defer { client.shutdown() }
            let budgetSpent = try #require(Self.failure(await client.execute(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(listener.port)/x", body: [1], timeoutMs: 250))))
            #expect(budgetSpent.kind == .timedOut)
            #expect(!budgetSpent.requestMayHaveBeenSent)
            // The 250 ms budget, not the 5 s connect timeout, ended it (room for a busy machine in between).
            #expect(budgetSpent.elapsedMs >= 249 && budgetSpent.elapsedMs < 2_500, "\(budgetSpent.elapsedMs) ms: \(budgetSpent.message)")

            let shortConnect = HTTPClient(configuration: HTTPClientConfiguration(connectTimeoutMs: 150))
            defer { shortConnect.shutdown() }
            let connectTimedOut = try #require(Self.failure(await shortConnect.execute(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(listener.port)/x", body: [1], timeoutMs: 2_000))))
            #expect(connectTimedOut.kind == .connectFailed)
            #expect(!connectTimedOut.requestMayHaveBeenSent)
            // The 150 ms connect timeout, not the 2 s budget, ended it.
            #expect(connectTimedOut.elapsedMs >= 149 && connectTimedOut.elapsedMs < 1_500, "\(connectTimedOut.elapsedMs) ms")
        }

        @Test func responseLargerThanLimitIsRejected() async throws {
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, responder in
                responder.respond(HTTPServerResponse(status: 200, body: Fixtures.body(10_000)))
            }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let error = try #require(Self.failure(await client.execute(HTTPClientRequest(
                method: "GET", url: Fixtures.url(server, "/big"), timeoutMs: 2_000, maxResponseBytes: 1_000))))
            #expect(error.kind == .responseTooLarge)
            #expect(error.requestMayHaveBeenSent)
            let exact = try await client.execute(HTTPClientRequest(
                method: "GET", url: Fixtures.url(server, "/big"), timeoutMs: 2_000, maxResponseBytes: 10_000)).get()
            #expect(exact.body == Fixtures.body(10_000))
        }

        @Test func invalidRequestsAreRejectedBeforeSending() async throws {
            let client = HTTPClient()
            defer { client.shutdown() }
            let cases: [HTTPClientRequest] = [
                HTTPClientRequest(method: "GET", url: "http://127.0.0.1:1/", headers: [HTTPHeader(name: "Bad Name", value: "x")], timeoutMs: 1_000),
                HTTPClientRequest(method: "GET", url: "http://127.0.0.1:1/", headers: [HTTPHeader(name: "X", value: "a\r\nInjected: 1")], timeoutMs: 1_000),
                HTTPClientRequest(method: "POST", url: "http://127.0.0.1:1/", headers: [HTTPHeader(name: "content-length", value: "5")], timeoutMs: 1_000),
                HTTPClientRequest(method: "GE T", url: "http://127.0.0.1:1/", timeoutMs: 1_000),
                HTTPClientRequest(method: "GET", url: "ftp://127.0.0.1/file", timeoutMs: 1_000),
                HTTPClientRequest(method: "GET", url: "not a url", timeoutMs: 1_000),
            ]
            for request in cases {
                let error = try #require(Self.failure(await client.execute(request)))
                #expect(error.kind == .invalidRequest, "\(request.method) \(request.url): \(error)")
                #expect(!error.requestMayHaveBeenSent)
            }
            let expired = try #require(Self.failure(await client.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:1/", timeoutMs: 0))))
            #expect(expired.kind == .timedOut)
            #expect(!expired.requestMayHaveBeenSent)
        }

        @Test func serverClosingAfterReceivingIsConnectionLost() async throws {
            // A raw listener that reads the request and closes without answering.
            let listener = try RawServer.closingAfterRequest()
            defer { listener.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let error = try #require(Self.failure(await client.execute(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(listener.port)/x", body: Fixtures.body(64), timeoutMs: 2_000))))
            #expect(error.kind == .connectionLost)
            #expect(error.requestMayHaveBeenSent)
        }
    }
}

extension HTTPTests.ClientFailures {
    @Test func deadReusedConnectionIsNotResentByLibcurl() async throws {
        let server = try RawServer.answeringOnceThenClosing()
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let url = "http://127.0.0.1:\(server.port)/x"
        let first = try await client.execute(HTTPClientRequest(method: "POST", url: url, body: Fixtures.body(32), timeoutMs: 2_000)).get()
        #expect(first.status == 200)
        let second = await client.execute(HTTPClientRequest(method: "POST", url: url, body: Fixtures.body(32), timeoutMs: 2_000))
        guard case .failure(let error) = second else { Issue.record("expected a failure"); return }
        #expect(error.kind == .connectionLost)
        #expect(error.requestMayHaveBeenSent)
        // libcurl would have sent the second request again on a new connection; the client refused.
        // The server counts a request before it closes, so both are counted by now; a resend would
        // be a third, on a new connection. Give one a whole second to show up.
        #expect(await Waiting.until(timeoutMs: 5_000) { server.requestsReceived >= 2 })
        #expect(!(await Waiting.until(timeoutMs: 1_000) { server.requestsReceived > 2 }), "the request was sent again")
        #expect(server.requestsReceived == 2)
        #expect(client.inFlightCount == 0)
    }
}
