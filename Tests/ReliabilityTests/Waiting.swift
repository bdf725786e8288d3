import Foundation
import Observability

/// Waiting on conditions (polled every 20 ms), never on fixed sleeps.
enum Waiting {
    /// Polls `condition` until it holds or `timeoutMs` passes; returns whether it held.
    static func until(timeoutMs: Int64, _ condition: () -> Bool) async -> Bool {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}
