import Dispatch
import Kafka
import Observability
import Synchronization

/// Whether the worker's consumer groups failed in a way retrying will not heal (the
/// `ConsumerErrorWatch` verdicts of both consumer loops, requests and reconciliation): the first
/// such error fails `/readyz` with its reason and is logged once, as an error saying what to
/// change; `ConsumerErrorWatch.exitAfterMs` later (a timer, or the next error past it) the handlers
/// run once, as for a fatal producer error (`ProducerFault`): the worker stops and the process
/// exits non-zero.
final class ConsumerFault: Sendable {
    private struct State {
        var watch: ConsumerErrorWatch
        var fatal: String?
        var handlers: [@Sendable (String) -> Void] = []
    }

    private let state: Mutex<State>
    private let logger: Logger
    private let clock: @Sendable () -> Int64

    /// A fault record judging errors with `watch` at `clock`'s time (wall-clock milliseconds),
    /// logging through `logger`.
    init(watch: ConsumerErrorWatch, logger: Logger, clock: @escaping @Sendable () -> Int64) {
        state = Mutex(State(watch: watch))
        self.logger = logger
        self.clock = clock
    }

    /// Why the consumer cannot work (what `/readyz` says), once a failure was reported.
    var reason: String? { state.withLock { $0.watch.failure?.reason } }

    /// The failure's reason once it became fatal (the worker is stopping to exit non-zero).
    var fatalReason: String? { state.withLock { $0.fatal } }

    /// Judges a poll error seen at `nowMs`; true when it is a retriable one the caller logs as a
    /// warning, as before. A failure that will not heal is logged here, once.
    func report(_ error: KafkaError, nowMs: Int64) -> Bool {
        let verdict = state.withLock { $0.watch.observe(error, nowMs: nowMs) }
        switch verdict {
        case .retry:
            return true
        case .reported:
            return false
        case .unhealthy(let reason):
            let exitAfterMs = state.withLock { $0.watch.exitAfterMs }
            logger.error("\(reason); /readyz fails, and the worker exits non-zero in \(exitAfterMs / 1000) s",
                         [("error", .string(error.description))])
            expire(afterMs: exitAfterMs)
            return false
        case .fatal(let reason):
            fail(reason)
            return false
        }
    }

    /// Makes the failure fatal once it is old enough: checked after `afterMs`, again until it is.
    private func expire(afterMs: Int64) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(max(100, afterMs)))) { [self] in
            let (verdict, remaining) = state.withLock { state -> (ConsumerErrorWatch.Verdict?, Int64?) in
                let verdict = state.watch.expire(nowMs: clock())
                guard verdict == nil, !state.watch.isFatal, let failure = state.watch.failure else { return (verdict, nil) }
                return (nil, failure.atMs + state.watch.exitAfterMs - clock())
            }
            if case .fatal(let reason) = verdict { fail(reason) }
            if let remaining { expire(afterMs: remaining) }
        }
    }

    /// Records the fatal reason and runs the handlers (once: the watch gives `fatal` once).
    private func fail(_ reason: String) {
        let handlers = state.withLock { state -> [@Sendable (String) -> Void] in
            state.fatal = reason
            return state.handlers
        }
        for handler in handlers { handler(reason) }
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
