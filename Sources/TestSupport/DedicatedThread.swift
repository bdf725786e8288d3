import CPosix
import Foundation

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
}
