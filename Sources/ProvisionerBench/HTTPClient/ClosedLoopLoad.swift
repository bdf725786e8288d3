import Synchronization

/// Keeps a fixed number of requests in flight: each completion immediately sends the next one,
/// until a request count or a time limit is reached. Records every latency with its end time.
final class ClosedLoopLoad: Sendable {
    /// One completed request.
    struct Sample {
        var endMs: Double
        var latencyMs: Double
        var failure: String?
    }

    private struct State {
        var issued = 0
        var completed = 0
        var samples: [Sample] = []
    }

    private let client: any LoadClient
    private let body: [UInt8]
    private let delayMs: Int
    private let timeoutMs: Int
    private let requestLimit: Int
    private let stopIssuingAtMs: Double
    private let state = Mutex(State())

    init(client: any LoadClient, body: [UInt8], delayMs: Int, timeoutMs: Int, requestLimit: Int, stopIssuingAtMs: Double) {
        self.client = client
        self.body = body
        self.delayMs = delayMs
        self.timeoutMs = timeoutMs
        self.requestLimit = requestLimit
        self.stopIssuingAtMs = stopIssuingAtMs
        state.withLock { $0.samples.reserveCapacity(min(requestLimit, 200_000)) }
    }

    /// Sends the first `inFlight` requests.
    func start(inFlight: Int) {
        for _ in 0..<inFlight { issueIfAllowed() }
    }

    /// Requests completed so far.
    var completed: Int { state.withLock { $0.completed } }

    /// Requests sent and not completed.
    var outstanding: Int { state.withLock { $0.issued - $0.completed } }

    /// Every sample so far.
    var samples: [Sample] { state.withLock { $0.samples } }

    private func issueIfAllowed() {
        let allowed = state.withLock { state -> Bool in
            guard state.issued < requestLimit, ProcessUsage.monotonicMilliseconds() < stopIssuingAtMs else { return false }
            state.issued += 1
            return true
        }
        guard allowed else { return }
        let started = ProcessUsage.monotonicMilliseconds()
        client.post(body: body, delayMs: delayMs, timeoutMs: timeoutMs) { failure in
            let ended = ProcessUsage.monotonicMilliseconds()
            self.state.withLock { state in
                state.completed += 1
                state.samples.append(Sample(endMs: ended, latencyMs: ended - started, failure: failure))
            }
            self.issueIfAllowed()
        }
    }
}
