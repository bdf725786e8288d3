/// The most a `WorkScheduler` has held at once since it was created: calls in flight (in all and
/// per program) and tickets waiting. Updated where the counts rise, inside the scheduler's own
/// state (so under its driver's lock, with no lock of its own): no peak between two reads is missed.
public struct SchedulerPeaks: Sendable, Equatable {
    /// Most calls in flight at once.
    public internal(set) var running = 0
    /// Most tickets waiting at once (in class queues or behind their key).
    public internal(set) var queued = 0
    /// Most calls in flight at once, per program.
    public internal(set) var runningPerProgram: [String: Int] = [:]

    /// Creates peaks (empty by default).
    public init(running: Int = 0, queued: Int = 0, runningPerProgram: [String: Int] = [:]) {
        self.running = running
        self.queued = queued
        self.runningPerProgram = runningPerProgram
    }
}
