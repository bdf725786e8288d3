import Dispatch
import Foundation
import HTTP
import Observability
import Synchronization

/// Scrapes the workers' `/metrics` every interval on its own thread and keeps the last 15 minutes
/// of `OverviewPoint`s and the newest scrape; readers take snapshots under a lock.
public final class MetricsMonitor: Sendable {
    private struct State {
        var points: [OverviewPoint] = []
        var latest: MetricsScrape?
        var started = false
        var stopped = false
        var observers: [@Sendable () -> Void] = []
    }

    private let endpoints: [String]
    private let intervalMs: Int64
    private let client: HTTPClient
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Creates a monitor for `endpoints` (not yet running).
    public init(endpoints: [String], intervalMs: Int64) {
        self.endpoints = endpoints
        self.intervalMs = intervalMs
        self.client = HTTPClient()
    }

    /// Starts the scraping thread.
    public func start() {
        state.withLock { $0.started = true }
        let thread = Thread { [self] in
            while !state.withLock({ $0.stopped }) {
                scrapeOnce()
                _ = wake.wait(timeout: .now() + .milliseconds(Int(intervalMs)))
            }
            finished.signal()
        }
        thread.name = "console-metrics"
        thread.start()
    }

    /// Stops the thread and the HTTP client.
    public func stop() {
        let (first, started) = state.withLock { state in
            defer { state.stopped = true }
            return (!state.stopped, state.started)
        }
        guard first else { return }
        if started {
            wake.signal()
            _ = finished.wait(timeout: .now() + .seconds(10))
        }
        client.shutdown()
    }

    /// The figures for the Overview page now.
    public func figures() -> OverviewFigures {
        let (points, latest) = state.withLock { ($0.points, $0.latest) }
        let scraped = latest.map { $0.expositions.count + $0.unreachable.count } ?? endpoints.count
        return OverviewFigures(points: points, latest: latest, endpoints: scraped)
    }

    /// Calls `observer` after every scrape (on the scraping thread; keep it short).
    public func observe(_ observer: @escaping @Sendable () -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// The newest scrape.
    public var latest: MetricsScrape? { state.withLock { $0.latest } }

    /// Scrapes every endpoint once (in parallel, 3 s each) and records the result.
    func scrapeOnce() {
        let group = DispatchGroup()
        let bodies = Mutex<[String: PrometheusExposition]>([:])
        let targets = MetricsTargets.expand(endpoints)
        for endpoint in targets {
            group.enter()
            client.execute(HTTPClientRequest(method: "GET", url: endpoint, timeoutMs: 3_000)) { result in
                if case .success(let response) = result, response.status == 200 {
                    let exposition = PrometheusExposition(String(decoding: response.body, as: UTF8.self))
                    bodies.withLock { $0[endpoint] = exposition }
                }
                group.leave()
            }
        }
        _ = group.wait(timeout: .now() + .seconds(5))
        let expositions = bodies.withLock { $0 }
        let scrape = MetricsScrape(atMs: Timestamps.nowMs(), expositions: expositions,
                                   unreachable: (targets.isEmpty ? endpoints : targets).filter { expositions[$0] == nil })
        let point = OverviewPoint(scrape)
        let observers = state.withLock { state in
            state.latest = scrape
            state.points.append(point)
            state.points.removeAll { $0.atMs < point.atMs - OverviewFigures.windowMs }
            return state.observers
        }
        for observer in observers { observer() }
    }
}
