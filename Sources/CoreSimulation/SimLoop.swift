import Pipeline

/// A simulated consumer loop: its turns are events, one pending at a time; an idle loop turns
/// every `idleTurnMs`, a woken one at once (records or a rebalance arrived).
final class SimLoop: LoopHandle, @unchecked Sendable {
    let world: SimWorld
    let process: SimProcess
    let name: String
    let idleTurnMs: Int64
    /// The loop's turn; dropped once the loop ended (it holds the loop's owner).
    private var turn: (@Sendable () -> Bool)?
    private var nextAt: Int64?
    private var token = 0
    private(set) var isFinished = false

    init(world: SimWorld, process: SimProcess, name: String, idleTurnMs: Int64, turn: @escaping @Sendable () -> Bool) {
        self.world = world
        self.process = process
        self.name = name
        self.idleTurnMs = idleTurnMs
        self.turn = turn
    }

    /// A turn runs soon (now plus scheduling jitter), unless one is due sooner.
    func wake() {
        schedule(at: world.nowMs + world.int(0...3))
    }

    private func schedule(at: Int64) {
        guard !isFinished else { return }
        if let next = nextAt, next <= at { return }
        nextAt = at
        token += 1
        let mine = token
        world.at(at, process, "poll turn") { [self] in
            guard token == mine else { return }
            nextAt = nil
            if turn?() == true {
                schedule(at: world.nowMs + idleTurnMs)
            } else {
                isFinished = true
                turn = nil
            }
        }
    }

    /// The run is over: the turn is let go.
    func tearDown() {
        turn = nil
        token += 1
    }

    func waitUntilFinished() {
        precondition(isFinished, "the simulation never waits for a loop: it checks isFinished")
    }
}
