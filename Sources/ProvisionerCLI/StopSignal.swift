import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Waits for SIGINT or SIGTERM (caught through Dispatch, so the default action never kills the
/// process mid-drain), optionally also for the parent process to go away.
final class StopSignal: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var sources: [any DispatchSourceProtocol] = []

    /// Starts catching SIGINT and SIGTERM; with `exitWithParent`, also fires when the process that
    /// started this one ends (so a crashed test run or script leaves nothing behind).
    init(exitWithParent: Bool = false) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [semaphore] in semaphore.signal() }
            source.resume()
            sources.append(source)
        }
        if exitWithParent {
            let parent = getppid()
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now(), repeating: .milliseconds(200))
            timer.setEventHandler { [semaphore] in
                if getppid() != parent { semaphore.signal() }
            }
            timer.resume()
            sources.append(timer)
        }
    }

    /// Blocks until a stop is asked for.
    func wait() { semaphore.wait() }

    /// Blocks up to `milliseconds`; true when a stop was asked for.
    func wait(milliseconds: Int) -> Bool { semaphore.wait(timeout: .now() + .milliseconds(milliseconds)) == .success }

    /// Asks for a stop from inside the process.
    func trigger() { semaphore.signal() }

    /// Stops listening.
    func cancel() { sources.forEach { $0.cancel() } }
}

/// Writes text to standard output unbuffered (a parent reading a pipe sees it at once).
func writeStandardOutput(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}
