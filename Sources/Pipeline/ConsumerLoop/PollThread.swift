import CPosix
import Foundation

/// The thread a consumer loop runs on, and the signal that it ended. `waitUntilFinished` may be
/// called by any number of threads, before or after the end.
final class PollThread: LoopHandle {
    private let finished = DispatchSemaphore(value: 0)

    /// Runs `body` on a new thread named `name` (the system keeps 15 bytes of it: a longer name
    /// would not be set at all).
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [finished] in
            // Foundation's `Thread.name` does not reach the system's name on Linux.
            _ = provisioner_name_current_thread(String(decoding: name.utf8.prefix(15), as: UTF8.self))
            body()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Blocks until the body has returned.
    func waitUntilFinished() {
        finished.wait()
        finished.signal()
    }
}
