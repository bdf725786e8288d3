import Foundation

/// Runs blocking work (Kafka polls, waits) on a thread of its own, off Swift's cooperative pool,
/// so that blocking never starves other tests running in parallel.
public enum DedicatedThread {
    /// Runs `body` on a new thread and returns its result.
    public static func run<T: Sendable>(name: String = "test-blocking-work",
                                        _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
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
                continuation.resume(returning: body())
            }
            thread.name = name
            thread.start()
        }
    }
}
