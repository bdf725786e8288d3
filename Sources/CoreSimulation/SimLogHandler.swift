import Observability

/// The workers' logs go to the trace when a seed is replayed (`SIMULATION_SEED`).
struct SimLogHandler: LogHandler {
    let world: SimWorld
    let name: String

    func emit(_ record: LogRecord) {
        guard world.isTracing else { return }
        let fields = record.fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        world.note("\(name) log \(record.level): \(record.message) \(fields)")
    }
}
