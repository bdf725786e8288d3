/// `provisioner demo`: runs the main job on embedded defaults (broker, simulator, worker, mixed load).
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "runs the main job on embedded defaults (broker, simulator, worker, mixed load)"
    static let help = "usage: provisioner demo\n\nruns the main job on embedded defaults (broker, simulator, worker, mixed load) (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'demo' is not built yet")
    }
}
