import Kafka
import Synchronization

/// Whether the worker's producer failed for good: a fatal error (an idempotent producer that can
/// no longer keep its guarantees) fails every later write, so nothing the worker answers can be
/// acknowledged any more. The first fatal error is kept and its handlers run once: the worker
/// stops fetching, `/readyz` fails, and the process exits non-zero so it is restarted with a new
/// producer. Offsets whose outputs were not acknowledged are never completed, so a restarted (or
/// other) worker redoes them.
final class ProducerFault: Sendable {
    private struct State {
        var error: KafkaError?
        var handlers: [@Sendable (KafkaError) -> Void] = []
    }

    private let state = Mutex(State())

    /// Creates a fault record with no fault.
    init() {}

    /// The first fatal error seen, if any.
    var error: KafkaError? { state.withLock { $0.error } }

    /// Whether a fatal error was seen.
    var hasFailed: Bool { error != nil }

    /// Records `error` when it is fatal; the first one runs the handlers (outside the lock).
    func record(_ error: KafkaError) {
        guard error.isFatal else { return }
        let handlers = state.withLock { state -> [@Sendable (KafkaError) -> Void] in
            guard state.error == nil else { return [] }
            state.error = error
            return state.handlers
        }
        for handler in handlers { handler(error) }
    }

    /// Runs `handler` on the first fatal error (at once when there was one already).
    func whenFailed(_ handler: @escaping @Sendable (KafkaError) -> Void) {
        let existing = state.withLock { state -> KafkaError? in
            if state.error == nil { state.handlers.append(handler) }
            return state.error
        }
        if let existing { handler(existing) }
    }
}
