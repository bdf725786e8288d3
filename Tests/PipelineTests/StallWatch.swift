import Foundation
import HTTP
import Observability
import Synchronization

/// Notices when the simulator was slow to handle what reached it: a thread asks it for a path it
/// does not serve (404, ~13 µs of its own work) every 20 ms and records every answer that took
/// over 50 ms (when it came and how long it took). The simulator stamps a call when its handler
/// runs, so while its threads wait for a CPU (a 2-core machine shared with a broker, workers and
/// other builds) nothing is stamped, and the calls that arrived meanwhile are stamped together
/// afterwards: a window that holds a stall's end has those calls in it, one that holds its start
/// misses them.
final class StallWatch: Sendable {
    struct Stall: Sendable {
        /// When the late answer came (epoch ms).
        var endMs: Int64
        /// How long the probe took.
        var lengthMs: Int64
    }

    private let stalls = Mutex<[Stall]>([])
    private let stopped = Mutex(false)
    private let done = DispatchSemaphore(value: 0)

    /// Starts probing `http://127.0.0.1:port` with `http`.
    init(simulatorPort port: UInt16, http: HTTPClient) {
        let thread = Thread { [self] in
            let answered = DispatchSemaphore(value: 0)
            while !stopped.withLock({ $0 }) {
                let sent = Timestamps.nowMs()
                http.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)/_stall_probe", timeoutMs: 10_000)) { _ in answered.signal() }
                answered.wait()
                let now = Timestamps.nowMs()
                if now - sent > 50 { stalls.withLock { $0.append(Stall(endMs: now, lengthMs: now - sent)) } }
                usleep(20_000)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops probing and waits for the probe thread (once).
    func stop() {
        let wasStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        if !wasStopped { done.wait() }
    }

    /// Total length of the stalls that ended within `[fromMs, toMs)`: calls stamped late into the window.
    func endedMs(fromMs: Int64, toMs: Int64) -> Int64 {
        stalls.withLock { $0.filter { $0.endMs >= fromMs && $0.endMs < toMs }.reduce(0) { $0 + $1.lengthMs } }
    }

    /// Total length of the stalls overlapping `[fromMs, toMs)`: time the window could stamp nothing.
    func overlappingMs(fromMs: Int64, toMs: Int64) -> Int64 {
        stalls.withLock { stalls in
            stalls.reduce(0) { total, stall in
                let start = stall.endMs - stall.lengthMs
                return total + max(0, min(stall.endMs, toMs) - max(start, fromMs))
            }
        }
    }

    /// Every stall so far, for a report.
    var all: [Stall] { stalls.withLock { $0 } }
}
