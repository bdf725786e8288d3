import Console
import Foundation
import HTTP
import Kafka
import Observability
import Pipeline
import Recovery

/// `provisioner console --config FILE [--listen HOST:PORT]` and `provisioner console hash-token`.
enum ConsoleCommand: Command {
    static let name = "console"
    static let summary = "serves the operator console (web pages over Kafka and the workers' /metrics)"
    static let help = """
        usage: provisioner console --config FILE [--listen HOST:PORT]
               provisioner console hash-token [--token-env VAR] [--iterations N]

        console     serves the operator console: Overview (live figures and 15-minute charts from the
                    workers' /metrics), Lag (the worker group's committed offsets against the end
                    offsets), Dead letters (the dlq filters, redacted detail, dry-run preview and
                    rate-limited bulk replay with typed confirmation, the parked queue) and Request
                    trace (a request id or card_ref: audit timeline, results, markers,
                    reconciliation, dead letters, replays). Reads Kafka with its own clients by
                    manual assignment: it never joins the workers' group. Access needs a token from
                    console.tokens; replays need the replayer role and are audited ('replayed'
                    events) under the token's name. Listens on console.listen (default
                    127.0.0.1:8090, loopback). The session cookie is Secure: browsers accept it over
                    http only from loopback (localhost, 127.0.0.1); put https in front for anything else.
        hash-token  reads a token from standard input (first line) or from VAR and prints its
                    salted hash (pbkdf2-sha256$ITERATIONS$SALT$HASH) for console.tokens[].hash.

        options:
          --config FILE     the configuration: kafka, group_id, topics, dlq and the console section
          --listen H:P      overrides console.listen (0.0.0.0 only behind https and a NetworkPolicy)
          --token-env VAR   hash-token: read the token from environment variable VAR
          --iterations N    hash-token: PBKDF2 iterations (default \(TokenHash.defaultIterations))
        """

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        if let action = arguments.popPositional() {
            guard action == "hash-token" else { throw UsageError("unknown action '\(action)': the only action is hash-token") }
            return try hashToken(&arguments)
        }
        let path = try arguments.requiredOption("config")
        let listenText = arguments.option("listen")
        try arguments.rejectUnknown()
        OperatorReaderMemory.giveLargeBlocksBack()
        let environment = ProcessInfo.processInfo.environment
        let worker = try ConfigurationFile.load(path: path, environment: environment, strict: false, requireSecrets: false,
                                                requirePrograms: false)
        guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw CommandFailure("cannot read config file \(path)")
        }
        var configuration: ConsoleConfiguration
        do {
            configuration = try ConsoleConfiguration.parse(json: text)
        } catch {
            throw CommandFailure("\(path): \(error)")
        }
        if let listenText {
            guard let listen = HostPort(listenText) else { throw UsageError("--listen must be HOST:PORT, e.g. 127.0.0.1:8090") }
            configuration.listen = listen
        }
        let replayKeys = try ReplayKeySource.keyring(worker.replayKeyList)
        let logger = Logger(label: "console", minimumLevel: worker.logLevel)
        let monitor = MetricsMonitor(endpoints: configuration.metricsEndpoints, intervalMs: configuration.scrapeIntervalMs)
        monitor.start()
        let context = ConsoleContext(kafka: worker.kafka, topics: worker.topics, groupID: worker.groupID, configuration: configuration,
                                     replayKeys: replayKeys, logger: logger, monitor: monitor)
        let server: ConsoleServer
        do {
            server = try ConsoleServer(host: configuration.listen.host, port: configuration.listen.port, context: context)
        } catch {
            monitor.stop()
            throw CommandFailure(error.message)
        }
        logger.notice("console listening", [("listen", .string("\(configuration.listen.host):\(server.port)")),
                                            ("tokens", .integer(Int64(configuration.tokens.count))),
                                            ("metrics_endpoints", .integer(Int64(configuration.metricsEndpoints.count)))])
        writeStandardOutput("console=http://\(configuration.listen.host.contains(":") ? "[\(configuration.listen.host)]" : configuration.listen.host):\(server.port)/\n")
        let stop = StopSignal(exitWithParent: false)
        stop.wait()
        server.stop()
        monitor.stop()
        stop.cancel()
        return 0
    }

    private static func hashToken(_ arguments: inout CommandArguments) throws -> Int32 {
        let variable = arguments.option("token-env")
        let iterations = try arguments.integer("iterations", default: TokenHash.defaultIterations, in: TokenHash.minimumIterations...10_000_000)
        try arguments.rejectUnknown()
        let token: String
        if let variable {
            guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
                throw CommandFailure("environment variable \(variable) is not set")
            }
            token = value
        } else {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CommandFailure("no token on standard input") }
            token = line
        }
        guard token.utf8.count >= 16 else { throw CommandFailure("a token must be at least 16 characters (e.g. 'openssl rand -hex 24')") }
        writeStandardOutput(TokenHash(token: token, iterations: iterations).description + "\n")
        return 0
    }
}
