import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tracks the calls that are using a librdkafka handle, so that closing never destroys the handle
/// under a running call.
///
/// A client moves from `open` to `draining` (long calls such as consumer polls are refused, short
/// calls still pass, for example commits from a rebalance listener while the consumer leaves its group)
/// to `closed` (every call is refused) and only then destroys its handle.
final class KafkaClientGate: Sendable {
    /// What a call needs from the client.
    enum Kind {
        /// A call that may block (poll, flush): refused once closing starts.
        case long
        /// A short call (commit, send, metadata): allowed until the handle is about to be destroyed.
        case short
    }

    private enum Phase { case open, draining, closed }
    private struct State {
        var phase = Phase.open
        var longCalls = 0
        var shortCalls = 0
    }

    private let state = Mutex(State())

    /// Registers a call; false when the client no longer accepts it.
    func enter(_ kind: Kind) -> Bool {
        state.withLock { state in
            switch (state.phase, kind) {
            case (.open, .long):
                state.longCalls += 1
                return true
            case (.open, .short), (.draining, .short):
                state.shortCalls += 1
                return true
            default:
                return false
            }
        }
    }

    /// Ends a call registered by `enter`.
    func leave(_ kind: Kind) {
        state.withLock { state in
            switch kind {
            case .long: state.longCalls -= 1
            case .short: state.shortCalls -= 1
            }
        }
    }

    /// Runs `body` as a registered call, or returns nil when the client refuses it.
    func withCall<T>(_ kind: Kind, _ body: () throws(KafkaError) -> T) throws(KafkaError) -> T? {
        guard enter(kind) else { return nil }
        defer { leave(kind) }
        return try body()
    }

    /// Refuses new long calls and waits for running ones; false when closing had already started.
    func beginDraining() -> Bool {
        let first = state.withLock { state in
            guard state.phase == .open else { return false }
            state.phase = .draining
            return true
        }
        if first { waitUntil { $0.longCalls == 0 } }
        return first
    }

    /// Refuses every call and waits until none is running: afterwards the handle may be destroyed.
    func close() {
        state.withLock { $0.phase = .closed }
        waitUntil { $0.longCalls == 0 && $0.shortCalls == 0 }
    }

    /// True once `beginDraining` or `close` was called.
    var isClosing: Bool {
        state.withLock { $0.phase != .open }
    }

    private func waitUntil(_ condition: (State) -> Bool) {
        while !state.withLock({ condition($0) }) {
            usleep(200)
        }
    }
}
