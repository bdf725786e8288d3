import CRdKafka
import Dispatch
import Foundation
import Synchronization

/// A dedicated thread that serves a librdkafka handle's main queue (`rd_kafka_poll`), so delivery
/// reports and error callbacks run there and never on the caller's thread.
final class KafkaPollThread: Sendable {
    /// The raw handle, shared with the thread. The owner stops the thread before destroying it.
    private struct Handle: @unchecked Sendable { let raw: OpaquePointer }

    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts polling `handle` every `intervalMs` at most until `stop()`. `name` (at most 15 bytes)
    /// is the thread's system name, as `ps -L`, debuggers and `pthread_getname_np` show it.
    init(name: String, handle: OpaquePointer, intervalMs: Int32 = 100) {
        let shared = Handle(raw: handle)
        let thread = Thread { [self] in
            _ = provisioner_name_current_thread(String(name.utf8.prefix(15))!)
            while !self.stopRequested.load(ordering: .acquiring) {
                rd_kafka_poll(shared.raw, intervalMs)
            }
            // Serve what arrived while stopping, then report that the handle is no longer used.
            rd_kafka_poll(shared.raw, 0)
            self.finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the thread to stop and waits until it no longer touches the handle. Idempotent.
    func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }
}
