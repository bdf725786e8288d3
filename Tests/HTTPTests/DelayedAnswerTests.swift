import Dispatch
import HTTP
import Synchronization
import Testing

extension HTTPTests {
    /// Answers given later, from other threads, without a thread per waiting request.
    @Suite(.timeLimit(.minutes(5))) struct DelayedAnswers {
        @Test func delayedAnswerDoesNotBlockImmediateOnes() async throws {
            // The slow answer is held until the test releases it, after the immediate ones: so
            // "not blocked" is a fact of ordering, not a race against a 200 ms timer.
            let release = DispatchSemaphore(value: 0)
            let slowReceived = Atomic<Bool>(false)
            let slowAnswered = Atomic<Bool>(false)
            let waiter = DispatchQueue(label: "delays")
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
                if request.path == "/slow" {
                    slowReceived.store(true, ordering: .releasing)
                    waiter.async {
                        release.wait()
                        slowAnswered.store(true, ordering: .releasing)
                        responder.respond(.text(200, "slow:" + String(decoding: request.body, as: UTF8.self)))
                    }
                } else {
                    responder.respond(.text(200, "fast"))
                }
            }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }

            async let slow = client.execute(HTTPClientRequest(method: "POST", url: Fixtures.url(server, "/slow"),
                                                              body: Array("payload".utf8), timeoutMs: 10_000))
            #expect(await Waiting.until(timeoutMs: 5_000) { slowReceived.load(ordering: .acquiring) }, "the slow request never reached the server")
            for _ in 0..<20 {
                let fast = try await client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/fast"), timeoutMs: 5_000)).get()
                #expect(fast.body == Array("fast".utf8))
            }
            // All 20 immediate answers arrived while the slow one was still held by the server.
            let answeredEarly = slowAnswered.load(ordering: .acquiring)
            #expect(!answeredEarly, "the slow answer was given before the immediate ones finished")
            release.signal()
            let slowResponse = try await slow.get()
            #expect(slowResponse.status == 200)
            #expect(slowResponse.body == Array("slow:payload".utf8))
        }

        @Test func thousandConcurrentDelayedRequestsUseFewThreads() async throws {
            ResourceLimits.raiseOpenFileLimit()
            let received = Atomic<Int>(0)
            let parked = Mutex<[(HTTPResponder, String)]>([])
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
                parked.withLock { $0.append((responder, request.path)) }
                received.add(1, ordering: .relaxed)
            }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let threadsBefore = ProcessStatus.threadCount()

            let count = 1_000
            let results = Mutex<[Int: Result<HTTPClientResponse, HTTPTransportError>]>([:])
            for index in 0..<count {
                client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/r/\(index)"), timeoutMs: 20_000)) { result in
                    results.withLock { $0[index] = result }
                }
            }
            #expect(await Waiting.until(timeoutMs: 15_000) { received.load(ordering: .relaxed) == count },
                    "server saw \(received.load(ordering: .relaxed)) of \(count)")
            // All requests are now pending at once: one connection each, none answered yet.
            let threadsDuring = ProcessStatus.threadCount()
            #expect(server.openConnectionCount >= count)
            #expect(client.inFlightCount == count)
            #expect(threadsDuring - threadsBefore < 64, "threads \(threadsBefore) → \(threadsDuring) with \(count) pending")

            // Answer them all from one other thread.
            let answered = parked.withLock { list in defer { list.removeAll() }; return list }
            DispatchQueue.global().async {
                for (responder, path) in answered { responder.respond(.text(200, path)) }
            }
            #expect(await Waiting.until(timeoutMs: 15_000) { results.withLock { $0.count } == count })
            let all = results.withLock { $0 }
            for index in 0..<count {
                let body = try #require(try? all[index]?.get().body)
                #expect(body == Array("/r/\(index)".utf8))
            }
        }

        @Test func answersRacingTheSuspendArriveIntact() async throws {
            // Each answer is sent from another thread as soon as possible, so it lands while the
            // handler is still running, while the connection is being suspended, or after.
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
                DispatchQueue.global().async { responder.respond(.json(200, request.body)) }
            }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }
            let count = 2_000
            let done = Atomic<Int>(0)
            let wrong = Atomic<Int>(0)
            for index in 0..<count {
                let body = Array("{\"i\":\(index)}".utf8)
                client.execute(HTTPClientRequest(method: "POST", url: Fixtures.url(server, "/"), body: body, timeoutMs: 20_000)) { result in
                    if (try? result.get().body) != body { wrong.add(1, ordering: .relaxed) }
                    done.add(1, ordering: .relaxed)
                }
            }
            #expect(await Waiting.until(timeoutMs: 20_000) { done.load(ordering: .relaxed) == count })
            #expect(wrong.load(ordering: .relaxed) == 0)
        }

        @Test func lateAndDuplicateAnswersAreDroppedSafely() async throws {
            let kept = Mutex<[HTTPResponder]>([])
            let timers = DispatchQueue(label: "late")
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { request, responder in
                kept.withLock { $0.append(responder) }
                if request.path == "/twice" {
                    responder.respond(.text(200, "first"))
                    responder.respond(.text(500, "second"))
                } else {
                    // Answer long after the client gave up and closed the connection.
                    timers.asyncAfter(deadline: .now() + .milliseconds(150)) { responder.respond(.text(200, "late")) }
                }
            }
            defer { server.stop() }
            let client = HTTPClient()
            defer { client.shutdown() }

            let twice = try await client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/twice"), timeoutMs: 2_000)).get()
            #expect(twice.status == 200)
            #expect(twice.body == Array("first".utf8))

            let gaveUp = await client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/late"), timeoutMs: 50))
            guard case .failure(let error) = gaveUp else { Issue.record("expected a timeout"); return }
            #expect(error.kind == .timedOut)
            // Wait for the late answer to hit the vanished connection, then answer everything again.
            try await Task.sleep(nanoseconds: 250_000_000)
            for responder in kept.withLock({ $0 }) { responder.respond(.text(200, "again")) }
            let after = try await client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/twice"), timeoutMs: 2_000)).get()
            #expect(after.body == Array("first".utf8))
        }

        @Test func stopAnswersPendingRequestsWith503() async throws {
            let received = Atomic<Int>(0)
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { _, _ in
                received.add(1, ordering: .relaxed)
            }
            let client = HTTPClient()
            defer { client.shutdown() }
            let statuses = Mutex<[Int]>([])
            for _ in 0..<20 {
                client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, "/hang"), timeoutMs: 10_000)) { result in
                    statuses.withLock { $0.append((try? result.get().status) ?? -1) }
                }
            }
            #expect(await Waiting.until(timeoutMs: 5_000) { received.load(ordering: .relaxed) == 20 })
            let started = Waiting.now()
            server.stop()
            #expect(await Waiting.until(timeoutMs: 2_000) { statuses.withLock { $0.count } == 20 })
            #expect(Waiting.now() - started < 500)
            #expect(statuses.withLock { $0 }.allSatisfy { $0 == 503 }, "\(statuses.withLock { $0 })")
        }
    }
}
