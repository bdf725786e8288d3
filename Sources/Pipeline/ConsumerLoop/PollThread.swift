import Foundation

/// The thread a consumer loop runs on, and the signal that it ended. `waitUntilFinished` may be
/// called by any number of threads, before or after the end.
final class PollThread: LoopHandle {
    private let finished = DispatchSemaphore(value: 0)

    /// Runs `body` on a new thread named `name`.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [finished] in
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
