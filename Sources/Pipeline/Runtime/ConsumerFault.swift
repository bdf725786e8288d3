import Kafka
import Observability
import Synchronization

/// Whether the worker's consumer groups failed in a way retrying will not heal (the
/// `ConsumerErrorWatch` verdicts of both consumer loops, requests and reconciliation): the first
/// such error fails `/readyz` with its reason and is logged once, as an error saying what to
/// change; if errors keep coming `ConsumerErrorWatch.exitAfterMs` later, the handlers run once, as
/// for a fatal producer error (`ProducerFault`): the worker stops and the process exits non-zero.
final class ConsumerFault: Sendable {
    private struct State {
        var watch: ConsumerErrorWatch
        var fatal: String?
        var handlers: [@Sendable (String) -> Void] = []
    }

    private let state: Mutex<State>
    private let logger: Logger

    /// A fault record judging errors with `watch`, logging through `logger`.
    init(watch: ConsumerErrorWatch, logger: Logger) {
        state = Mutex(State(watch: watch))
        self.logger = logger
    }

    /// Why the consumer cannot work (what `/readyz` says), once a failure was reported.
    var reason: String? { state.withLock { $0.watch.failure?.reason } }

    /// The failure's reason once it became fatal (the worker is stopping to exit non-zero).
    var fatalReason: String? { state.withLock { $0.fatal } }

    /// Judges a poll error seen at `nowMs`; true when it is a retriable one the caller logs as a
    /// warning, as before. A failure that will not heal is logged here, once.
    func report(_ error: KafkaError, nowMs: Int64) -> Bool {
        let (verdict, handlers) = state.withLock { state -> (ConsumerErrorWatch.Verdict, [@Sendable (String) -> Void]) in
            let verdict = state.watch.observe(error, nowMs: nowMs)
            guard case .fatal(let reason) = verdict else { return (verdict, []) }
            state.fatal = reason
            return (verdict, state.handlers)
        }
        switch verdict {
        case .retry:
            return true
        case .reported:
            return false
        case .unhealthy(let reason):
            logger.error("\(reason); /readyz fails, and the worker exits non-zero if this goes on",
                         [("error", .string(error.description)), ("exit_after_ms", .integer(state.withLock { $0.watch.exitAfterMs }))])
            return false
        case .fatal(let reason):
            for handler in handlers { handler(reason) }
            return false
        }
    }

    /// Runs `handler` with the reason when the failure becomes fatal (at once if it is already).
    func whenFatal(_ handler: @escaping @Sendable (String) -> Void) {
        let existing = state.withLock { state -> String? in
            if state.fatal == nil { state.handlers.append(handler) }
            return state.fatal
        }
        if let existing { handler(existing) }
    }
}
