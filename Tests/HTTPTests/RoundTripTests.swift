import Dispatch
import HTTP
import Synchronization
import Testing

extension HTTPTests {
    /// Requests and answers travel intact in both directions.
    @Suite(.timeLimit(.minutes(5))) struct RoundTrip {
        /// Echoes what it received: method, path, query, one header and the body.
        private static func echoServer() throws -> HTTPServer {
            try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
                var headers = [
                    HTTPHeader(name: "X-Method", value: request.method),
                    HTTPHeader(name: "X-Path", value: request.path),
                    HTTPHeader(name: "X-Query", value: request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")),
                    HTTPHeader(name: "X-Echo", value: request.header("x-TEST-header") ?? "<none>"),
                    HTTPHeader(name: "X-Empty", value: request.header("X-Empty").map { "[\($0)]" } ?? "<none>"),
                    HTTPHeader(name: "X-Peer", value: request.peer ?? "<none>"),
                ]
                headers.append(HTTPHeader(name: "Content-Type", value: "application/octet-stream"))
                responder.respond(HTTPServerResponse(status: request.method == "POST" ? 201 : 200, headers: headers, body: request.body))
            }
        }

        @Test func getCarriesQueryAndHeadersBothWays() async throws {
            let server = try Self.echoServer()
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let result = await client.execute(HTTPClientRequest(
                method: "GET", url: Fixtures.url(server, "/v2/cards/abc?b=two%20words&a=1&flag"),
                headers: [HTTPHeader(name: "X-Test-Header", value: "hello"), HTTPHeader(name: "X-Empty", value: "")],
                timeoutMs: 2_000))
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.header("x-method") == "GET")
            #expect(response.header("X-PATH") == "/v2/cards/abc")
            #expect(response.header("x-query") == "a=1&b=two words&flag=")
            #expect(response.header("X-Echo") == "hello")
            #expect(response.header("X-Empty") == "[]")
            #expect(response.header("content-type") == "application/octet-stream")
            #expect(response.header("Content-Length") == "0")
            #expect(response.header("X-Missing") == nil)
            #expect(response.header("X-Peer") == "127.0.0.1", "the server names the TCP peer")
            #expect(response.body.isEmpty)
            #expect(response.elapsedMs > 0 && response.elapsedMs < 2_000)
        }

        @Test func postPutAndDeleteCarryBodies() async throws {
            let server = try Self.echoServer()
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let body = Fixtures.body(2_048)
            let post = try await client.execute(HTTPClientRequest(
                method: "POST", url: Fixtures.url(server, "/provision"),
                headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: body, timeoutMs: 2_000)).get()
            #expect(post.status == 201)
            #expect(post.header("X-Method") == "POST")
            #expect(post.body == body)

            let large = Fixtures.body(300_000)
            let put = try await client.execute(HTTPClientRequest(method: "PUT", url: Fixtures.url(server, "/large"), body: large, timeoutMs: 5_000)).get()
            #expect(put.status == 200)
            #expect(put.header("X-Method") == "PUT")
            #expect(put.body == large)

            let delete = try await client.execute(HTTPClientRequest(method: "DELETE", url: Fixtures.url(server, "/item/1"), timeoutMs: 2_000)).get()
            #expect(delete.header("X-Method") == "DELETE")
            #expect(delete.body.isEmpty)

            let emptyPost = try await client.execute(HTTPClientRequest(method: "POST", url: Fixtures.url(server, "/empty"), timeoutMs: 2_000)).get()
            #expect(emptyPost.status == 201)
            #expect(emptyPost.body.isEmpty)
        }

        @Test func completionHandlerVariantRunsOnceAndCountsInFlight() async throws {
            let release = Mutex<HTTPResponder?>(nil)
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, responder in
                release.withLock { $0 = responder }
            }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let calls = Atomic<Int>(0)
            let status = Atomic<Int>(0)
            client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/"), timeoutMs: 2_000)) { result in
                calls.add(1, ordering: .relaxed)
                status.store((try? result.get().status) ?? -1, ordering: .relaxed)
            }
            #expect(client.inFlightCount == 1)
            #expect(await Waiting.until(timeoutMs: 2_000) { release.withLock { $0 != nil } })
            release.withLock { $0?.respond(.text(202, "accepted")) }
            #expect(await Waiting.until(timeoutMs: 2_000) { calls.load(ordering: .relaxed) == 1 })
            #expect(status.load(ordering: .relaxed) == 202)
            #expect(client.inFlightCount == 0)
        }

        @Test func sequentialRequestsReuseOneConnection() async throws {
            let server = try Self.echoServer()
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            for index in 0..<50 {
                let response = try await client.execute(HTTPClientRequest(
                    method: "POST", url: Fixtures.url(server, "/seq/\(index)"), body: Fixtures.body(512), timeoutMs: 2_000)).get()
                #expect(response.status == 201)
            }
            #expect(server.acceptedConnectionCount == 1)
        }

        @Test func perHostConnectionLimitIsHonoured() async throws {
            let pending = Mutex<[HTTPResponder]>([])
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, responder in
                pending.withLock { $0.append(responder) }
            }
            defer { server.stop() }
            let client = HTTPClient(configuration: HTTPClientConfiguration(maxConnectionsPerHost: 2))
            defer { client.shutdown() }
            let done = Atomic<Int>(0)
            for _ in 0..<6 {
                client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/"), timeoutMs: 5_000)) { _ in
                    done.add(1, ordering: .relaxed)
                }
            }
            #expect(await Waiting.until(timeoutMs: 2_000) { pending.withLock { $0.count } == 2 })
            #expect(server.openConnectionCount == 2)
            // Answer whatever is waiting until all six are through: never more than two at once.
            #expect(await Waiting.until(timeoutMs: 3_000) {
                let waiting = pending.withLock { list in defer { list.removeAll() }; return list }
                for responder in waiting { responder.respond(.text(200, "ok")) }
                return done.load(ordering: .relaxed) == 6
            })
            #expect(server.acceptedConnectionCount == 2)
        }
    }
}
