import Foundation
import Observability
import Pipeline

/// `provisioner worker --config FILE`: the production worker, one consumer group member.
enum WorkerCommand: Command {
    static let name = "worker"
    static let summary = "runs the production worker (a consumer group member)"
    static let help = """
        usage: provisioner worker --config FILE [--exit-with-parent]

        Joins the consumer group on the requests topic, validates requests, calls each program's
        issuer within the request's deadline, and publishes results, audit events, reconciliation
        jobs and dead letters. Every key of FILE can be overridden by a PROVISIONER_… environment
        variable (see docs/CONFIGURATION.md); secrets are read only from the environment variables
        the configuration names. Unknown keys are warnings here (errors in 'config check').

        SIGTERM or SIGINT: stop fetching, finish in-flight requests within shutdown.drain_timeout_ms,
        commit, flush, leave the group, exit 0. A fatal producer error stops fetching, fails /readyz
        and exits 1 once drained (nothing unacknowledged is committed: restart the worker).
        Logs are JSON lines on stderr.
        Serves /healthz, /readyz and /metrics on http.listen.

        options:
          --config FILE        the worker configuration (JSON)
          --exit-with-parent   also stop when the process that started it ends
        """
    static let switchNames: Set<String> = ["exit-with-parent"]

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        let path = try arguments.requiredOption("config")
        let exitWithParent = arguments.flag("exit-with-parent")
        try arguments.rejectUnknown()
        let environment = ProcessInfo.processInfo.environment
        let configuration = try ConfigurationFile.load(path: path, environment: environment, strict: false)
        let logger = Logger(label: "worker", minimumLevel: configuration.logLevel)
        let stop = StopSignal(exitWithParent: exitWithParent)
        let worker: Worker
        do {
            worker = try Worker(configuration: configuration, environment: environment, logger: logger)
            worker.whenFailed { stop.trigger() }
            try worker.start()
            if let port = worker.observabilityPort {
                logger.notice("serving /healthz, /readyz and /metrics", [("port", .integer(Int64(port)))])
            }
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        } catch {
            throw CommandFailure("could not start: \(error)")
        }
        stop.wait()
        logger.notice("stop requested: draining", [("unsettled", .integer(Int64(worker.unsettledCount)))])
        worker.shutdown()
        worker.waitUntilStopped()
        stop.cancel()
        if let failure = worker.fatalError {
            logger.error("worker stopped after a fatal error; exiting 1 so it is restarted", [("error", .string(failure))])
            return 1
        }
        return 0
    }
}
