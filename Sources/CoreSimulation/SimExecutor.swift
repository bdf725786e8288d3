import Pipeline

/// A simulated process's `Executor`: its pool, serial queues, timers and consumer loops are events
/// of the world, scheduled with small random delays (the order in which threads would have run),
/// and dropped when the process dies. Serial queues keep their order; every closure runs whole, so
/// the interleavings explored are those between closures (the core's locks make each one atomic).
final class SimExecutor: Executor, @unchecked Sendable {
    let world: SimWorld
    let process: SimProcess
    /// How long an idle consumer loop waits before its next turn (a real one blocks in `poll`).
    let idleTurnMs: Int64
    private(set) var loops: [SimLoop] = []
    let pool: any WorkQueue
    private let poolQueue: SimQueue

    init(world: SimWorld, process: SimProcess, idleTurnMs: Int64 = 50) {
        self.world = world
        self.process = process
        self.idleTurnMs = idleTurnMs
        poolQueue = SimQueue(world: world, process: process, serial: false, label: "pool")
        pool = poolQueue
    }

    /// The worker pool runs nothing until `untilMs` (every thread busy, as on a saturated
    /// machine): work handed to it meanwhile runs then. Serial queues and loops go on.
    func stallPool(untilMs: Int64) {
        poolQueue.stalledUntilMs = untilMs
    }

    func serialQueue(label: String, onPool: Bool) -> any WorkQueue {
        SimQueue(world: world, process: process, serial: true, label: label)
    }

    func timer(label: String) -> any WorkTimer {
        SimTimer(world: world, process: process)
    }

    func startLoop(name: String, turn: @escaping @Sendable () -> Bool) -> any LoopHandle {
        let loop = SimLoop(world: world, process: process, name: name, idleTurnMs: idleTurnMs, turn: turn)
        loops.append(loop)
        loop.wake()
        return loop
    }

    /// Whether every loop this process started has ended.
    var loopsFinished: Bool { loops.allSatisfy(\.isFinished) }

    /// Forgets the loops (the run is over): each holds its consumer loop's turn.
    func tearDown() {
        for loop in loops { loop.tearDown() }
        loops.removeAll()
    }

    /// Wakes the process's loops (records arrived, a rebalance is due): a turn runs soon.
    func wakeLoops() {
        for loop in loops { loop.wake() }
    }
}
