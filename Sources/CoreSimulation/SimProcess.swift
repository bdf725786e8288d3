/// One simulated worker process: its events stop when it is killed (`kill -9`: state dropped,
/// nothing more runs, what it had in flight lands or not).
final class SimProcess: @unchecked Sendable {
    /// Its name in traces and its worker id.
    let name: String
    /// False once killed or exited.
    private(set) var isAlive = true

    init(name: String) {
        self.name = name
    }

    /// It dies now.
    func kill() { isAlive = false }
}
