import CPosix
import CRdKafka
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A dedicated thread that serves a librdkafka handle's main queue (`rd_kafka_poll`), so delivery
/// reports and error callbacks run there and never on the caller's thread.
final class KafkaPollThread: Sendable {
    /// The raw handle, shared with the thread. The owner stops the thread before destroying it.
    struct Handle: @unchecked Sendable { let raw: OpaquePointer }

    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let thread = Mutex<pthread_t?>(nil)
    private let finalAction = Mutex<(@Sendable () -> Void)?>(nil)

    /// Starts polling `handle` every `intervalMs` at most until `stop()`. `name` (its first 15
    /// bytes) is the thread's system name, as `ps -L`, debuggers and `/proc` show it.
    init(name: String, handle: OpaquePointer, intervalMs: Int32 = 100) {
        let shared = Handle(raw: handle)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            _ = provisioner_name_current_thread(name)
            self.thread.withLock { $0 = pthread_self() }
            started.signal()
            while !self.stopRequested.load(ordering: .acquiring) {
                rd_kafka_poll(shared.raw, intervalMs)
            }
            if let action = self.finalAction.withLock({ $0 }) {
                action()
            } else {
                // Serve what arrived while stopping.
                rd_kafka_poll(shared.raw, 0)
            }
            self.finished.signal()
        }
        thread.start()
        started.wait()
    }

    /// True when called on the poll thread (from a callback it runs).
    var isCurrentThread: Bool {
        thread.withLock { current in current.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Asks the thread to stop and waits until it no longer touches the handle. Idempotent. Never
    /// call it on the poll thread (use `stopFromPollThread`).
    func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    /// From the poll thread itself (inside a callback): stops once the callback has returned to
    /// librdkafka and the current poll ended, then runs `action` on this thread, outside any callback.
    func stopFromPollThread(then action: @escaping @Sendable () -> Void) {
        finalAction.withLock { $0 = action }
        stopRequested.store(true, ordering: .releasing)
    }
}
