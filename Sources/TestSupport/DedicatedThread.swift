import CPosix
import Foundation
import Synchronization

/// Runs blocking work (Kafka polls, waits) on a thread of its own, off Swift's cooperative pool,
/// so that blocking never starves other tests running in parallel.
public enum DedicatedThread {
    /// Sets the system name of the calling thread (first 15 bytes), which Foundation's `Thread.name`
    /// does not do on Linux; read it back from `/proc/thread-self/comm`.
    public static func nameCurrentThread(_ name: String) {
        _ = provisioner_name_current_thread(name)
    }

    /// Runs `body` on a new thread (system name `name`, at most 15 bytes) and returns its result.
    public static func run<T: Sendable>(name: String = "test-blocking-work",
                                        _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                nameCurrentThread(name)
                continuation.resume(with: Result { try body() })
            }
            thread.name = name
            thread.start()
        }
    }

    /// Runs a non-throwing `body` on a new thread and returns its result.
    public static func run<T: Sendable>(name: String = "test-blocking-work",
                                        _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                nameCurrentThread(name)
                continuation.resume(returning: body())
            }
            thread.name = name
            thread.start()
        }
    }

    /// Runs `body` on a new thread at the lowest priority (nice 19) and returns its result: long
    /// CPU-bound work (simulation batches) then takes only the CPU the tests beside it leave,
    /// instead of slowing their task threads to a crawl.
    public static func runInBackground<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await run(name: name) {
            _ = provisioner_set_current_thread_nice(19)
            return body()
        }
    }

    /// Starts `body` on a new thread before returning, and hands back its result to await later.
    /// Unlike `async let x = run { ... }`, whose child task needs a free task thread before the
    /// thread is even created, the work is under way when this returns, however busy the pool is.
    public static func start<T: Sendable>(name: String = "test-blocking-work",
                                          _ body: @escaping @Sendable () -> T) -> Started<T> {
        let started = Started<T>()
        let thread = Thread {
            nameCurrentThread(name)
            started.finish(body())
        }
        thread.name = name
        thread.start()
        return started
    }

    /// The result of work begun by `start`: `value` waits for it.
    public final class Started<T: Sendable>: Sendable {
        private enum State {
            case running
            case awaited(CheckedContinuation<T, Never>)
            case finished(T)
        }

        private let state = Mutex<State>(.running)

        fileprivate init() {}

        fileprivate func finish(_ result: T) {
            let waiter = state.withLock { state -> CheckedContinuation<T, Never>? in
                defer { state = .finished(result) }
                if case .awaited(let continuation) = state { return continuation }
                return nil
            }
            waiter?.resume(returning: result)
        }

        /// The work's result, once its thread has returned it (one caller awaits it).
        public var value: T {
            get async {
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state -> T? in
                        if case .finished(let result) = state { return result }
                        state = .awaited(continuation)
                        return nil
                    }
                    if let ready { continuation.resume(returning: ready) }
                }
            }
        }
    }
}
