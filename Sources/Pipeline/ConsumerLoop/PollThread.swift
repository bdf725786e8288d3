import CPosix
import Foundation

/// The thread a consumer loop runs on, and the signal that it ended. `waitUntilFinished` may be
/// called by any number of threads, before or after the end.
final class PollThread: LoopHandle {
    private let finished = DispatchSemaphore(value: 0)

    /// Runs `body` on a new thread named `name` (its first 15 bytes: what the system keeps).
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [finished] in
            // Foundation's `Thread.name` does not reach the system's name on Linux.
            _ = provisioner_name_current_thread(name)
            body()
            finished.signal()
        }
        thread.start()
    }

    /// Blocks until the body has returned.
    func waitUntilFinished() {
        finished.wait()
        finished.signal()
    }
}
