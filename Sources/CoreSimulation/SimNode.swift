import Contract
import Kafka
import Observability
import Pipeline

/// One simulated worker process: the real `Worker` (configuration, intake, scheduler, call,
/// settlement, fencing, decisions, both consumer loops, reconciliation) built on a
/// `WorkerRuntime` whose ports are the simulation's.
final class SimNode: @unchecked Sendable {
    let process: SimProcess
    let executor: SimExecutor
    let producer: SimProducer
    private(set) var consumers: [SimConsumer] = []
    private(set) var worker: Worker?
    /// The worker's metrics: what it counted, kept after it died (`SimulationCoverage`).
    let metrics = MetricsRegistry()
    /// Whether a graceful stop was asked.
    private(set) var isLeaving = false
    /// How far this process's clock is off the world's (`SimulationSettings.skewMs`).
    let clockOffsetMs: Int64

    init(name: String, world: SimWorld, cluster: SimCluster, issuer: SimIssuer, settings: SimulationSettings,
         group: String, probe: any CoreProbe) throws {
        process = SimProcess(name: name)
        let clockOffsetMs = settings.skewMs > 0 ? world.int(-settings.skewMs...settings.skewMs) : 0
        self.clockOffsetMs = clockOffsetMs
        executor = SimExecutor(world: world, process: process, idleTurnMs: 1_000)
        producer = SimProducer(cluster: cluster, process: process, faultRate: settings.produceFaultRate)
        let producer = self.producer
        let executor = self.executor
        let process = self.process
        var runtime = WorkerRuntime(
            executor: executor, clock: { world.nowMs + clockOffsetMs },
            makeProducer: { _, _, _ in producer },
            makeGroupConsumer: { [unowned self] properties, _, relay, committed, _ in
                let consumer = SimConsumer(cluster: cluster, process: process, executor: executor,
                                           groupID: properties["group.id"] ?? group, seekFaultRate: settings.seekFaultRate,
                                           commitTimeoutRate: settings.commitTimeoutRate,
                                           relay: relay, committed: committed)
                consumers.append(consumer)
                return consumer
            },
            makeMarkerReader: { _, topic, _, _ in SimMarkerReader(cluster: cluster, topic: topic, process: process.name) },
            http: issuer, shutdownHTTP: {}, instance: "\(name)-\(world.int(0...0xffff_ffff))")
        runtime.mutations = settings.mutations
        runtime.probe = probe
        let logger = Logger(label: name, minimumLevel: world.isTracing ? .info : .error, handler: SimLogHandler(world: world, name: name))
        worker = try Worker(configuration: SimWorkload.configuration(workerID: name, group: group, settings: settings),
                            environment: SimWorkload.environment, logger: logger, metrics: metrics, runtime: runtime)
        try worker?.start()
    }

    /// The run is over: the worker and its loops are let go.
    func tearDown() {
        process.kill()
        executor.tearDown()
        consumers.removeAll()
        worker = nil
    }

    /// kill -9: nothing of the process runs any more; its group memberships end at the session timeout.
    func kill() {
        process.kill()
        for consumer in consumers { consumer.died() }
        worker = nil
    }

    /// SIGTERM: the worker drains and leaves; once both loops ended the process exits.
    func leave(world: SimWorld) {
        isLeaving = true
        worker?.shutdown()
        awaitExit(world: world)
    }

    private func awaitExit(world: SimWorld) {
        world.after(100, process, "exit check") { [self] in
            guard executor.loopsFinished else { return awaitExit(world: world) }
            worker?.closeAfterLoops()
            world.after(500, process, "process exits") { [self] in process.kill(); worker = nil }
        }
    }
}
