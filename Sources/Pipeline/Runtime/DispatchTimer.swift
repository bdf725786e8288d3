import Contract
import Dispatch
import Synchronization

/// One reusable Dispatch timer armed for the earliest moment asked for: arming it for a later
/// time while an earlier one is pending changes nothing. `DispatchSourceTimer` is thread-safe
/// but not marked `Sendable`, hence `@unchecked`.
///
/// The source is armed under the same lock that records `armedAt`, so two concurrent `schedule`
/// calls cannot arm it in the opposite order from the one they recorded (which would leave it
/// late while `armedAt` says early). Delays are computed with saturating arithmetic and capped at
/// `maximumDelayMs`: a timer that wakes early finds nothing due and is armed again.
final class DispatchTimer: WorkTimer, @unchecked Sendable {
    /// The longest delay the source is armed for (about 24.8 days).
    static let maximumDelayMs = Int64(Int32.max)
    private let source: DispatchSourceTimer
    private let armedAt = Mutex<Int64?>(nil)
    /// Called with the delay just before the source is armed (tests widen races through it).
    private let willArm: (@Sendable (_ atMs: Int64, _ delayMs: Int64) -> Void)?

    init(label: String, willArm: (@Sendable (_ atMs: Int64, _ delayMs: Int64) -> Void)? = nil) {
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        source.schedule(deadline: .distantFuture)
        source.activate()
        self.willArm = willArm
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
        armedAt.withLock { armed in
            if let armed, armed <= atMs, armed >= nowMs { return }
            armed = atMs
            let delayMs = Self.delayMs(until: atMs, nowMs: nowMs)
            willArm?(atMs, delayMs)
            source.schedule(deadline: .now() + .milliseconds(Int(delayMs)), leeway: .milliseconds(1))
        }
    }

    /// `atMs - nowMs`, clamped to 0...`maximumDelayMs` (never traps, whatever the two values).
    static func delayMs(until atMs: Int64, nowMs: Int64) -> Int64 {
        min(max(0, atMs.clampedSubtracting(nowMs)), maximumDelayMs)
    }

    /// Stops the timer for good.
    func cancel() { source.cancel() }
}
