import Foundation
import Synchronization

/// Thread names seen by callbacks (a set), and whether every callback reported success.
final class ThreadNames: Sendable {
    private struct State {
        var names: Set<String> = []
        var count = 0
        var failures = 0
    }
    private let state = Mutex(State())

    /// The system name of the calling thread (Linux: `/proc/thread-self/comm`).
    static var current: String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func record(_ name: String, succeeded: Bool) {
        state.withLock {
            $0.names.insert(name)
            $0.count += 1
            if !succeeded { $0.failures += 1 }
        }
    }

    var names: Set<String> { state.withLock { $0.names } }
    var count: Int { state.withLock { $0.count } }
    var allSucceeded: Bool { state.withLock { $0.failures == 0 } }
}
