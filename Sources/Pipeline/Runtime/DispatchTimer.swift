import Dispatch
import Synchronization

/// One reusable Dispatch timer armed for the earliest moment asked for: arming it for a later
/// time while an earlier one is pending changes nothing. `DispatchSourceTimer` is thread-safe
/// but not marked `Sendable`, hence `@unchecked`.
final class DispatchTimer: @unchecked Sendable {
    private let source: DispatchSourceTimer
    private let armedAt = Mutex<Int64?>(nil)

    init(label: String) {
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        source.schedule(deadline: .distantFuture)
        source.activate()
    }

    /// Sets what runs when the timer fires (on the timer's own queue).
    func setHandler(_ handler: @escaping @Sendable () -> Void) {
        source.setEventHandler { [weak self] in
            self?.armedAt.withLock { $0 = nil }
            handler()
        }
    }

    /// Arms the timer for `atMs` (wall clock), unless it already fires at or before that time.
    func schedule(atMs: Int64?, nowMs: Int64) {
        guard let atMs else { return }
        let shouldArm = armedAt.withLock { armed -> Bool in
            if let armed, armed <= atMs, armed >= nowMs { return false }
            armed = atMs
            return true
        }
        guard shouldArm else { return }
        source.schedule(deadline: .now() + .milliseconds(Int(max(0, atMs - nowMs))), leeway: .milliseconds(1))
    }

    /// Stops the timer for good.
    func cancel() { source.cancel() }
}
