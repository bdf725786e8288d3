import Contract
import Observability
import Synchronization

/// Owns a worker's secrets: reads every one its configuration names (environment variables once,
/// files at start and whenever they change), checks them, and holds the `WorkerSecrets` new
/// requests are served with.
///
/// A secret that cannot be read at start is a configuration error. A file that changes is read
/// again and, when every value passes the checks, a new `WorkerSecrets` replaces the old one at
/// once (a request already admitted keeps the credentials it started with). A file that becomes
/// missing, empty, unreadable or unacceptable later keeps its last good value: `problem` says
/// why (for `/readyz`), it is logged once, and it clears when the file is good again. Nothing
/// here ever holds a value in a log field, an issue or a metric.
final class SecretResolver: Sendable {
    private let configuration: WorkerConfiguration
    private let reader: SecretReader
    private let logger: Logger
    private let state: Mutex<State>
    private let reloads: Counter
    private let watch = Mutex<(any WorkTimer)?>(nil)
    /// One refresh at a time (the timer's, or a test's), so each change is logged once.
    private let refreshing = Mutex(())
    /// Wall-clock milliseconds: which keys are current.
    private let clock: @Sendable () -> Int64

    private struct State: Sendable {
        var values: [SecretSource: Sensitive]
        /// What each file looked like when it was last read well (nil: read it again next time).
        var identities: [String: FileIdentity]
        /// Why a file's newest contents are not in use, by path.
        var problems: [String: String] = [:]
        var current: WorkerSecrets
    }

    /// Reads and checks every secret; throws a `ConfigurationError` naming each one that cannot be
    /// read or is refused (by key and source, never a value).
    init(configuration: WorkerConfiguration, environment: [String: String], logger: Logger, metrics: MetricsRegistry,
         clock: @escaping @Sendable () -> Int64 = { Timestamps.nowMs() }) throws(ConfigurationError) {
        self.configuration = configuration
        self.clock = clock
        reader = SecretReader(environment: environment)
        self.logger = logger
        var identities: [String: FileIdentity] = [:]
        for (_, path) in configuration.secretFiles { identities[path] = FileIdentity.current(path) }
        let (values, readIssues) = WorkerConfiguration.readSecrets(configuration, reader: reader)
        let issues = readIssues + WorkerConfiguration.secretValueIssues(configuration, values: values)
        if !issues.isEmpty { throw ConfigurationError(issues) }
        state = Mutex(State(values: values, identities: identities, current: WorkerSecrets(configuration: configuration, values: values, nowMs: clock())))
        reloads = metrics.counter("provisioner_secret_reloads_total", help: "Secret files read again after a change and put in use.")
        for (keyPath, path) in configuration.secretFiles {
            metrics.computedGauge("provisioner_secret_unreadable",
                                  help: "1 while a secret file cannot be read or is refused (the last good value stays in use).",
                                  labels: ["secret": keyPath]) { [weak self] in
                self?.state.withLock { $0.problems[path] } == nil ? 0 : 1
            }
        }
    }

    /// What new requests are served with (made again with the same values when a pseudonym key
    /// has retired since).
    var current: WorkerSecrets {
        state.withLock { state in
            if let expiry = state.current.pseudonymizerExpiresAtMs {
                let nowMs = clock()
                if nowMs >= expiry { state.current = WorkerSecrets(configuration: configuration, values: state.values, nowMs: nowMs) }
            }
            return state.current
        }
    }

    /// Why the worker is not ready on account of its secrets (the first file that cannot be read
    /// or is refused, by key and path), or nil.
    var problem: String? {
        let problems = state.withLock { $0.problems }
        guard let (keyPath, path) = configuration.secretFiles.first(where: { problems[$0.path] != nil }), let problem = problems[path] else { return nil }
        return "secret \(keyPath) \(problem); the last good value stays in use"
    }

    /// Checks every secret file once: reads those that changed (or could not be read last time)
    /// and puts the new values in use when all of them pass the checks.
    func refresh() {
        refreshing.withLock { _ in refreshFiles() }
    }

    private func refreshFiles() {
        let files = Dictionary(configuration.secretFiles.map { ($0.path, $0.keyPath) }, uniquingKeysWith: { first, _ in first })
        let known = state.withLock { (values: $0.values, identities: $0.identities, problems: $0.problems) }
        var candidates = known.values
        var identities = known.identities
        var problems = known.problems
        var read: [(path: String, value: Sensitive)] = []
        for (path, _) in files.sorted(by: { $0.key < $1.key }) {
            let identity = FileIdentity.current(path)
            if let identity, identity == known.identities[path], known.problems[path] == nil { continue }
            switch reader.read(.file(path)) {
            case .success(let value):
                identities[path] = identity
                problems[path] = nil
                if value.revealed != known.values[.file(path)]?.revealed { read.append((path, value)) }
            case .failure(let problem):
                identities[path] = nil
                problems[path] = problem.description
            }
        }
        // The values in use pass the checks; a file's new value is put in use only when they still
        // pass with it (too short, the replay key equal to a signing key: refused). A refused file
        // keeps its last good value, reports why, and is read again at the next check.
        var changed: [String] = []
        for (path, value) in read {
            var trial = candidates
            trial[.file(path)] = value
            if let issue = WorkerConfiguration.secretValueIssues(configuration, values: trial).first {
                let own = configuration.secrets.contains { $0.keyPath == issue.keyPath && $0.source == .file(path) }
                identities[path] = nil
                problems[path] = own ? issue.message : "is refused: \(issue.keyPath) \(issue.message)"
            } else {
                candidates = trial
                changed.append(path)
            }
        }
        let secrets = changed.isEmpty ? nil : WorkerSecrets(configuration: configuration, values: candidates, nowMs: clock())
        state.withLock { state in
            state.values = candidates
            state.identities = identities
            state.problems = problems
            if let secrets { state.current = secrets }
        }
        for path in changed {
            reloads.increment()
            // Kafka clients take their credentials when they are made: only a restart uses a new one.
            let message = (files[path] ?? "").hasPrefix("kafka_secret_file.")
                ? "secret file changed: the Kafka clients keep the value they started with until the worker restarts"
                : "secret file changed: new requests use the new value"
            logger.notice(message, [("secret", .string(files[path] ?? path)), ("path", .string(path))])
        }
        for (path, problem) in problems.sorted(by: { $0.key < $1.key }) where known.problems[path] != problem {
            logger.error("secret file unusable: the last good value stays in use and /readyz fails until it is fixed",
                         [("secret", .string(files[path] ?? path)), ("problem", .string(problem))])
        }
        for path in known.problems.keys.sorted() where problems[path] == nil {
            logger.notice("secret file usable again", [("secret", .string(files[path] ?? path)), ("path", .string(path))])
        }
    }

    /// Checks the secret files every `secrets.reload_interval_ms` on `timer` until `stopWatching`
    /// (nothing to do when no secret comes from a file).
    func startWatching(timer: any WorkTimer, clock: @escaping @Sendable () -> Int64) {
        guard !configuration.secretFiles.isEmpty else { return timer.cancel() }
        let intervalMs = configuration.secretReloadIntervalMs
        // Weak: the timer's handler must not keep a stopped worker's resolver alive.
        timer.setHandler { [weak self, weak timer] in
            guard let self else { return }
            self.refresh()
            timer?.schedule(atMs: clock() + intervalMs, nowMs: clock())
        }
        watch.withLock { $0 = timer }
        timer.schedule(atMs: clock() + intervalMs, nowMs: clock())
    }

    /// Stops checking the files.
    func stopWatching() {
        watch.withLock { timer in
            timer?.cancel()
            timer = nil
        }
    }
}
