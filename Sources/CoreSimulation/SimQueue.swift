import Pipeline

/// A simulated queue: `async` work runs after a random scheduling delay (usually under 2 ms,
/// now and then much longer, as on a busy machine); a serial queue runs its work in order.
final class SimQueue: WorkQueue, @unchecked Sendable {
    let world: SimWorld
    let process: SimProcess
    let serial: Bool
    let label: String
    private var lastMs: Int64 = 0
    /// Until when the queue runs nothing (its threads busy elsewhere): work queued meanwhile waits.
    var stalledUntilMs: Int64 = 0

    init(world: SimWorld, process: SimProcess, serial: Bool, label: String) {
        self.world = world
        self.process = process
        self.serial = serial
        self.label = label
    }

    private func jitter() -> Int64 {
        world.chance(0.02) ? world.int(5...40) : world.int(0...2)
    }

    func async(_ work: @escaping @Sendable () -> Void) {
        var at = max(world.nowMs + jitter(), stalledUntilMs)
        if serial {
            at = max(at, lastMs)
            lastMs = at
        }
        world.at(at, process, "queue", work)
    }

    func asyncAfter(milliseconds: Int64, _ work: @escaping @Sendable () -> Void) {
        var at = max(world.nowMs + max(0, milliseconds) + jitter(), stalledUntilMs)
        if serial {
            at = max(at, lastMs)
            lastMs = at
        }
        world.at(at, process, "queue (delayed)", work)
    }

    func sync(_ work: @Sendable () -> Void) {
        work()
    }
}
