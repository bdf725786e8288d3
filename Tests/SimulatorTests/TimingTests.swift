import Contract
import HTTP
import Simulator
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension SimulatorTests {
    @Suite(.timeLimit(.minutes(5))) struct Timing {
        static func nowMs() -> Double {
            var spec = timespec()
            clock_gettime(CLOCK_MONOTONIC, &spec)
            return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
        }

        static func nowWallMs() -> Double {
            var spec = timespec()
            clock_gettime(CLOCK_REALTIME, &spec)
            return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1_000_000
        }

        @Test func slowCardAnswersLateWhileANormalCardAnswersAtOnce() async throws {
            let harness = try SimulatorHarness()
            let device = try SimulatedDevice()
            let start = Self.nowMs()
            // A slow card of 3 s: the normal card must be answered while it is still pending, which
            // leaves a busy machine seconds of room instead of 150 ms.
            let slowFinished = Atomic<Bool>(false)
            let fields = device.googleHandshake().requestFields(legacy: true)
            let slow = Task {
                defer { slowFinished.store(true, ordering: .releasing) }
                return try await harness.imprint("pm-slow-3000", "google_pay", fields)
            }
            var slowArrived = false
            for _ in 0..<1_000 where !slowArrived {
                slowArrived = harness.simulator.calls.contains { $0.cardID == "pm-slow-3000" }
                if !slowArrived { try await Task.sleep(for: .milliseconds(5)) }
            }
            try #require(slowArrived, "the slow call never reached the simulator")
            let fast = try await harness.imprint("pm_fast", "google_pay", device.googleHandshake().requestFields(legacy: true))
            let fastDone = Self.nowMs() - start
            #expect(fast.status == 200)
            let slowWasPending = !slowFinished.load(ordering: .acquiring)
            #expect(slowWasPending, "a normal card was answered only after the slow one (\(fastDone) ms)")
            let slowResponse = try await slow.value
            let slowDone = Self.nowMs() - start
            #expect(slowResponse.status == 200)
            #expect(slowDone >= 3_000, "the slow card answered after \(slowDone) ms")
        }

        @Test func flakyCardFailsOnceWithoutStateChangeThenSucceeds() async throws {
            let harness = try SimulatorHarness()
            let handshake = try SimulatedDevice().appleHandshake()
            let first = try await harness.imprint("pm-flaky", "apple_pay", handshake.requestFields)
            #expect(first.status == 503)
            #expect(try SimulatorHarness.imprintCode(first) == "service_unavailable")
            #expect(try await harness.imprintTokens("pm-flaky").isEmpty)
            // Same nonce: the failed call consumed nothing.
            let second = try await harness.imprint("pm-flaky", "apple_pay", handshake.requestFields)
            #expect(second.status == 200)
            #expect(try await harness.imprintTokens("pm-flaky").count == 1)
        }

        @Test func hangingCardNeverAnswersWithinTheDeadline() async throws {
            let harness = try SimulatorHarness()
            let start = Self.nowMs()
            let request = HTTPClientRequest(method: "POST", url: harness.base + "/imprint/v2/payment_methods/pm-hang/provision/google_pay",
                                            headers: SimulatorHarness.bearer("sim-imprint-key"),
                                            body: JSONWriter.encode(.object(try SimulatedDevice().googleHandshake().requestFields(legacy: true))),
                                            timeoutMs: 300)
            let result = await harness.client.execute(request)
            guard case .failure(let error) = result else {
                Issue.record("a hanging card answered")
                return
            }
            #expect(error.kind == .timedOut)
            #expect(Self.nowMs() - start >= 290)
        }

        @Test func thousandConcurrentSlowRequestsShareNoThreads() async throws {
            ResourceLimits.raiseOpenFileLimit()
            let harness = try SimulatorHarness(profile: SimulatorProfile(recordCalls: false))
            let body = JSONWriter.encode(.object(try SimulatedDevice().googleHandshake().requestFields(legacy: true)))
            let start = Self.nowMs()
            let statuses = await withTaskGroup(of: Int.self) { group in
                for index in 0..<1000 {
                    let url = harness.base + "/imprint/v2/payment_methods/pm\(index)-slow-300/provision/google_pay"
                    group.addTask {
                        let request = HTTPClientRequest(method: "POST", url: url, headers: SimulatorHarness.bearer("sim-imprint-key"),
                                                        body: body, timeoutMs: 10_000)
                        if case .success(let response) = await harness.client.execute(request) { return response.status }
                        return -1
                    }
                }
                var collected: [Int] = []
                for await status in group { collected.append(status) }
                return collected
            }
            let elapsed = Self.nowMs() - start
            #expect(statuses.count == 1000)
            #expect(statuses.allSatisfy { $0 == 200 }, "statuses: \(Set(statuses))")
            #expect(elapsed >= 300)
            // One at a time they would take 300 s; the bound leaves room for a busy machine.
            #expect(elapsed < 15_000, "1,000 slow requests took \(elapsed) ms: not served concurrently")
        }
    }
}
