import Pipeline

/// A simulated `DispatchTimer`: armed for the earliest time asked for; the handler runs then.
final class SimTimer: WorkTimer, @unchecked Sendable {
    let world: SimWorld
    let process: SimProcess
    private var handler: (@Sendable () -> Void)?
    private var armedAt: Int64?
    private var token = 0
    private var cancelled = false

    init(world: SimWorld, process: SimProcess) {
        self.world = world
        self.process = process
    }

    func setHandler(_ handler: @escaping @Sendable () -> Void) {
        self.handler = handler
    }

    func schedule(atMs: Int64?, nowMs: Int64) {
        guard let atMs, !cancelled else { return }
        if let armed = armedAt, armed <= atMs, armed >= nowMs { return }
        armedAt = atMs
        token += 1
        let mine = token
        world.at(max(atMs, world.nowMs) + world.int(0...1), process, "timer") { [self] in
            guard token == mine, !cancelled else { return }
            armedAt = nil
            handler?()
        }
    }

    func cancel() {
        cancelled = true
    }
}
