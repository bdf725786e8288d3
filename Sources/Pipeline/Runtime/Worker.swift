import Contract
import Foundation
import HTTP
import Issuers
import Kafka
import Observability
import Recovery

/// A Provisioner worker: one member of the consumer group on the requests topic, with its
/// reconciliation runner and observability endpoint.
///
/// `start()` connects and begins consuming; `shutdown()` stops fetching, drains in-flight work
/// within `shutdown.drain_timeout_ms`, commits, flushes the producer and leaves the group.
/// A fatal producer error stops fetching at once and fails `/readyz`; `fatalError` says why, and
/// the process should then shut down and exit non-zero (`whenFailed`), to be restarted.
public final class Worker: Sendable {
    /// The configuration in force.
    public let configuration: WorkerConfiguration
    /// The metrics it exports.
    public let metrics: MetricsRegistry
    private let context: WorkerContext
    private let flow: RequestFlow
    let requests: RequestConsumer
    private let reconciler: ReconcileRunner
    let producer: any RecordProducer
    /// The ports the worker runs on.
    private let runtime: WorkerRuntime
    private let observability: ObservabilityServer?
    /// Sends spans to the OTLP collector (nil when tracing is off); closed after the loops.
    private let spanExporter: SpanExporter?
    private let fault = ProducerFault()

    /// Builds a worker; throws a `ConfigurationError` naming what is missing (a secret, a topic).
    /// Secrets come from `environment` (`…_env`) or files (`…_file`, watched for changes).
    /// `clock` (wall-clock milliseconds) is for tests that move time on; production keeps the default.
    public convenience init(configuration: WorkerConfiguration, environment: [String: String], logger: Logger,
                            metrics: MetricsRegistry = MetricsRegistry(), clock: @escaping @Sendable () -> Int64 = { Timestamps.nowMs() }) throws {
        ResourceLimits.raiseOpenFileLimit()
        // The process holds issuer keys, signing secrets and payloads: a crash leaves no core file.
        if !ResourceLimits.disableCoreDumps() { logger.warning("core dumps could not be disabled (setrlimit RLIMIT_CORE)") }
        let kafkaLogger = logger.child("librdkafka")
        KafkaLog.install { record in
            let level: LogLevel = record.severity <= 3 ? .error : record.severity == 4 ? .warning : record.severity <= 6 ? .info : .debug
            kafkaLogger.log(level, record.message, [("facility", .string(record.facility)), ("client", .string(record.client))])
        }
        try self.init(configuration: configuration, environment: environment, logger: logger, metrics: metrics,
                      runtime: .production(caBundlePath: configuration.caBundlePath, clock: clock))
    }

    /// Builds a worker on `runtime`'s ports (the deterministic simulation passes its own).
    package init(configuration: WorkerConfiguration, environment: [String: String], logger: Logger, metrics: MetricsRegistry,
                 runtime: WorkerRuntime) throws {
        self.configuration = configuration
        self.metrics = metrics
        self.runtime = runtime
        let clock = runtime.clock
        let secrets = try SecretResolver(configuration: configuration, environment: environment, logger: logger.child("secrets"), metrics: metrics,
                                         clock: clock)
        var producerProperties = KafkaStatisticsMetrics.withInterval(configuration.producerProperties)
        producerProperties["client.id"] = producerProperties["client.id"] ?? "provisioner-\(configuration.workerID)"
        let fault = self.fault
        let workerMetrics = WorkerMetrics(registry: metrics, programs: Array(configuration.programs.values))
        producer = try runtime.makeProducer(producerProperties, { error in fault.record(error) },
                                            workerMetrics.kafkaStatistics.handler(for: .producer, topic: nil))
        let executor = runtime.executor
        let publisher = OutputPublisher(producer: producer, retryQueue: executor.serialQueue(label: "provisioner.publish-retry", onPool: false),
                                        maxAttempts: configuration.publishAttempts, metrics: workerMetrics, logger: logger.child("publish"), fault: fault)
        let consumerProperties = configuration.consumerProperties
        let markersTopic = configuration.topics.markers
        let fencing = MarkerFencing(reader: try runtime.makeMarkerReader(consumerProperties, markersTopic, "marker-fencing", ["fetch.wait.max.ms": "10"]),
                                    queue: executor.serialQueue(label: "provisioner.marker-fencing", onPool: false), clock: clock,
                                    logger: logger.child("fencing"), instance: runtime.instance, lateFences: workerMetrics.markers.lateFences)
        let deciderLogger = logger.child("decisions")
        let decider = FinalDecider(publisher: publisher, fencing: fencing, topic: markersTopic, logger: deciderLogger,
                                   retryQueue: executor.serialQueue(label: "provisioner.decision-retry", onPool: false),
                                   counted: { workerMetrics.markers.countDecision($0) }) { () throws(KafkaError) in
            MarkerCatchUp(reader: try runtime.makeMarkerReader(consumerProperties, markersTopic, "marker-reader", [:]),
                          queue: executor.serialQueue(label: "provisioner.marker-look-up", onPool: false), logger: deciderLogger,
                          timeoutMs: 10_000, undecodable: workerMetrics.markers.undecodableMarkers,
                          fencesFromPositionOnly: runtime.mutations.fencesFromPositionOnly)
        }
        let tracer: Tracer?
        if let tracing = configuration.tracing {
            var settings = SpanExporter.Settings(endpoint: tracing.endpoint, maxQueue: tracing.maxQueue, instance: configuration.workerID)
            settings.timeoutMs = 5_000
            // Its own HTTP client: a slow collector never holds up an issuer call's event thread.
            let exporter = SpanExporter(settings: settings, http: HTTPClient(configuration: HTTPClientConfiguration(caBundlePath: configuration.caBundlePath)),
                                        metrics: metrics)
            spanExporter = exporter
            tracer = Tracer(ratio: tracing.sampleRatio, exporter: exporter)
        } else {
            spanExporter = nil
            tracer = nil
        }
        context = WorkerContext(
            configuration: configuration, logger: logger, metrics: workerMetrics, publisher: publisher,
            audit: AuditTrail(topic: configuration.topics.audit, worker: configuration.workerID, publisher: publisher, clock: clock),
            issuerClient: IssuerClient(http: runtime.http, clock: clock, logger: logger.child("issuer"), tracer: tracer,
                                       after: { delayMs, work in executor.pool.asyncAfter(milliseconds: delayMs, work) }),
            tracer: tracer, secrets: secrets,
            validator: RequestValidator(policy: ValidationPolicy(requireEncryption: configuration.requireEncryption)),
            nonceGuard: NonceGuard(horizonMs: configuration.nonceHorizonMs),
            duplicates: DuplicateFilter(horizonMs: min(configuration.duplicateHorizonMs, Self.inMemoryDuplicateHorizonMs)), ledger: OffsetLedger(), markerIndex: MarkerIndex(),
            horizon: DuplicateHorizon(horizonMs: configuration.duplicateHorizonMs, maxBytes: configuration.duplicateIndexMaxBytes,
                                      shares: configuration.programs.mapValues(\.duplicateShare)),
            fencing: fencing, decider: decider,
            payloadSealer: PayloadSealer(requireEncryption: configuration.requireEncryption),
            reconcileTiers: ReconcileTiers(delaysMs: configuration.reconcileTiersMs), requestLimits: RequestLimits(),
            replyRouting: ReplyRouting(configuration: configuration, topicCheck: ReplyTopicCheck(clock: clock) { [producer] in
                try? producer.partitionCounts(timeoutMs: 2_000)
            }),
            consumerFault: ConsumerFault(watch: ConsumerErrorWatch(consumerProperties: configuration.consumerProperties, groupID: configuration.groupID,
                                                                   exitAfterMs: configuration.consumerFailureExitMs),
                                         logger: logger.child("consumer"), clock: clock),
            clock: clock, executor: executor, mutations: runtime.mutations, probe: runtime.probe)
        workerMetrics.exportEvictions(nonceGuard: context.nonceGuard, duplicates: context.duplicates)
        workerMetrics.exportHorizon(context.horizon)
        flow = RequestFlow(context: context)
        requests = try RequestConsumer(context: context, flow: flow, runtime: runtime)
        reconciler = try ReconcileRunner(context: context, runtime: runtime)
        if let listen = configuration.httpListen, let address = HostPort(listen) {
            let requests = self.requests
            let consumerFault = context.consumerFault
            observability = try ObservabilityServer(host: address.host, port: address.port, registry: metrics) {
                if let error = fault.error { return "the producer failed for good (\(error.code.rawValue)); the worker is stopping to be restarted" }
                if let reason = consumerFault.reason { return reason }
                if let reason = secrets.problem { return reason }
                return requests.isReady ? nil : "not yet assigned partitions, or the brokers are unreachable"
            }
        } else {
            observability = nil
        }
        WorkerGauges.register(on: metrics, scheduler: flow.scheduler, ledger: context.ledger, producer: producer, requests: requests,
                              reconciler: reconciler, programs: configuration.programs)
        // Nothing can be acknowledged any more (a fatal producer error), or a consumer error that
        // retrying does not heal is still there after its bound: stop taking work (what is held is
        // redelivered) and exit non-zero. Weak: the faults (held by the parts the services use)
        // must not keep them alive.
        let requests = self.requests
        let reconciler = self.reconciler
        let drains = services.map(\.drainMs)
        let stopServices: @Sendable () -> Void = { [weak requests, weak reconciler] in
            for (service, drainMs) in zip([reconciler as (any WorkerService)?, requests], drains) { service?.requestStop(drainMs: drainMs) }
        }
        fault.whenFailed { error in
            logger.error("fatal producer error: fetching stopped, nothing more is committed; restart the worker",
                            [("error", .string(error.description))])
            stopServices()
        }
        context.consumerFault.whenFatal { _ in stopServices() }
    }

    /// The consumer loops in start order, each with the drain bound it gets when stopping:
    /// reconciliation first (a request's lost answer may schedule a job at once), then requests.
    /// A stopping loop's commits wait at most `forcedCommitTimeoutMs` past its drain bound.
    private var services: [(service: any WorkerService, drainMs: Int64)] {
        [(reconciler, min(configuration.shutdownDrainMs, 5_000)), (requests, configuration.shutdownDrainMs)]
    }

    /// How long the in-memory duplicate filter remembers finished ids (at most): beyond it, the
    /// durable horizon (`DuplicateHorizon`, from the markers topic) recognises answered requests.
    static let inMemoryDuplicateHorizonMs: Int64 = 10 * 60 * 1000

    /// Checks the topics exist with compatible partition counts, then starts consuming.
    public func start() throws {
        let topics = configuration.topics
        let requestPartitions = try producer.partitionCount(topic: topics.requests, timeoutMs: 10_000)
        let markerPartitions = try producer.partitionCount(topic: topics.markers, timeoutMs: 10_000)
        guard markerPartitions >= requestPartitions else {
            throw ConfigurationError([.init(.error, "topics.markers",
                                            "\(topics.markers) has \(markerPartitions) partitions but \(topics.requests) has \(requestPartitions); markers are co-partitioned with requests and need at least as many (run 'provisioner topics apply')")])
        }
        requests.setTotalPartitions(requestPartitions)
        context.metrics.primePartitionsPaused(topic: topics.requests, count: requestPartitions)
        for (service, _) in services { try service.start() }
        context.secrets.startWatching(timer: context.executor.timer(label: "provisioner.secret-files"), clock: context.clock)
        context.logger.notice("worker started", [("worker", .string(configuration.workerID)), ("group", .string(configuration.groupID)),
                                                 ("programs", .integer(Int64(configuration.programs.count))),
                                                 ("partitions", .integer(Int64(requestPartitions))),
                                                 ("librdkafka", .string(KafkaRuntime.version)),
                                                 ("assignor", .string(KafkaRuntime.assignor(configured: configuration.consumerProperties)))])
        if KafkaRuntime.hasCooperativeRebalanceDefect, KafkaRuntime.assignor(configured: configuration.consumerProperties) == "cooperative-sticky" {
            context.logger.notice("librdkafka below 2.10.0 can lose a cooperative member's assignment under load (confluentinc/librdkafka#4059): run 2.10 or later in production",
                                   [("librdkafka", .string(KafkaRuntime.version))])
        }
    }

    /// Begins a graceful stop (idempotent): stop fetching, drain within the configured bound.
    public func shutdown() {
        for (service, drainMs) in services { service.requestStop(drainMs: drainMs) }
    }

    /// Waits for a stop to finish: the consumer loops drained, committed and out of their groups
    /// (reverse start order), then fencing's reader closed, the producer flushed, the scheduler
    /// stopped, the producer closed, the HTTP client and the observability server stopped.
    public func waitUntilStopped() {
        for (service, _) in services.reversed() { service.waitUntilFinished() }
        closeAfterLoops()
    }

    /// The end of a stop once both consumer loops have finished: fencing's reader and the
    /// decision reader closed, the producer flushed, the scheduler stopped, the producer closed,
    /// the HTTP client and the observability server stopped.
    package func closeAfterLoops() {
        context.secrets.stopWatching()
        context.fencing.close()
        context.decider.close()
        let flushed = producer.flush(timeoutMs: 10_000)
        flow.stop()
        producer.close(timeoutMs: 5_000)
        runtime.shutdownHTTP()
        spanExporter?.close()
        observability?.stop()
        context.logger.notice("worker stopped", [("flushed", .bool(flushed))])
    }

    /// Whether the worker is ready for work (what `/readyz` reports).
    public var isReady: Bool { requests.isReady && !fault.hasFailed && context.consumerFault.reason == nil && context.secrets.problem == nil }

    /// Why the worker failed for good (a fatal producer error, or a consumer error that retrying
    /// did not heal within its bound), or nil: once set it has stopped fetching, and the process
    /// should shut it down and exit non-zero.
    public var fatalError: String? { fault.error?.description ?? context.consumerFault.fatalReason }

    /// Runs `handler` once when the worker fails for good (at once if it already has; a producer and
    /// a consumer failure each run it, so it may run twice).
    public func whenFailed(_ handler: @escaping @Sendable () -> Void) {
        fault.whenFailed { _ in handler() }
        context.consumerFault.whenFatal { _ in handler() }
    }

    /// Requests partitions currently assigned to this worker.
    public var assignedPartitionCount: Int { requests.assignedPartitions.count }

    /// The bound observability port (when `http.listen` asked for port 0).
    public var observabilityPort: UInt16? { observability?.port }

    /// Requests received and not yet finished.
    public var unsettledCount: Int { context.ledger.unsettledCount() }
}
