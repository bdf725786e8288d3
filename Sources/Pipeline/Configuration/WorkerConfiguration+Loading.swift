import Contract
import HTTP
import Observability

extension WorkerConfiguration {
    /// Reads `text` (JSON) with `environment` overrides. Returns the configuration and every
    /// issue; throws when an issue is an error (unknown keys are errors only when `strict`).
    /// `requirePrograms: false` is for tools that read only the Kafka and topic sections (the console).
    public static func load(json text: String, environment: [String: String], workerID: String,
                            strict: Bool, requireSecrets: Bool = true,
                            requirePrograms: Bool = true) throws(ConfigurationError) -> (WorkerConfiguration, [ConfigurationIssue]) {
        var document: JSONValue
        do {
            document = try JSONParser().parse(text)
        } catch {
            throw ConfigurationError([.init(.error, "(file)", "is not valid JSON: \(error)")])
        }
        var issues: [ConfigurationIssue] = []
        document = EnvironmentOverrides.apply(environment, to: document, issues: &issues)
        var configuration = parse(document, workerID: workerID, requirePrograms: requirePrograms, issues: &issues)
        if requireSecrets { issues += secretIssues(configuration, reader: SecretReader(environment: environment)) }
        for (property, variable) in configuration.kafkaSecretVariables {
            if let value = environment[variable], !value.isEmpty { configuration.kafka[property] = value }
        }
        // Kafka clients take their credentials when they are made: a file is read here, at start.
        for (property, path) in configuration.kafkaSecretFiles {
            if case .success(let value) = SecretReader(environment: environment).read(.file(path)) { configuration.kafka[property] = value.revealed }
        }
        issues = issues.map { issue in
            var issue = issue
            if issue.isUnknownKey && !strict { issue.severity = .warning }
            return issue
        }
        issues.sort { ($0.severity == .error ? 0 : 1, $0.keyPath) < ($1.severity == .error ? 0 : 1, $1.keyPath) }
        if issues.contains(where: { $0.severity == .error }) { throw ConfigurationError(issues) }
        return (configuration, issues)
    }

    // swiftlint:disable:next function_body_length
    static func parse(_ document: JSONValue, workerID: String, requirePrograms: Bool = true,
                      issues: inout [ConfigurationIssue]) -> WorkerConfiguration {
        var configuration = WorkerConfiguration(workerID: workerID)
        var root = ConfigurationReader(path: "", value: document, issues: &issues)

        configuration.kafka = properties(&root, "kafka", defaults: configuration.kafka)
        configuration.kafkaConsumer = properties(&root, "kafka_consumer", defaults: [:])
        // Zombie fencing orders a partition's owners by the classic protocol's group generation,
        // which the next-generation protocol (KIP-848) does not give: refused, never half-working.
        if let protocolName = configuration.consumerProperties["group.protocol"], protocolName.lowercased() != "classic" {
            let key = configuration.kafkaConsumer["group.protocol"] != nil ? "kafka_consumer.group.protocol" : "kafka.group.protocol"
            root.issues.append(.init(.error, key, "is '\(protocolName)': only the classic group protocol is supported (zombie fencing orders "
                                         + "a partition's owners by its group generation); remove it or set it to classic"))
        }
        var kafkaSecrets = root.object("kafka_secret_env")
        for property in kafkaSecrets.keys {
            if let variable = kafkaSecrets.string(property) {
                if variable.isEmpty { kafkaSecrets.issues.append(.init(.error, kafkaSecrets.keyPath(property), "must name an environment variable")) }
                configuration.kafkaSecretVariables[property] = variable
            }
        }
        root.absorb(kafkaSecrets)
        var kafkaSecretFiles = root.object("kafka_secret_file")
        for property in kafkaSecretFiles.keys {
            if let path = kafkaSecretFiles.string(property) {
                if !path.hasPrefix("/") { kafkaSecretFiles.issues.append(.init(.error, kafkaSecretFiles.keyPath(property), "must be an absolute path")) }
                if configuration.kafkaSecretVariables[property] != nil {
                    kafkaSecretFiles.issues.append(.init(.error, kafkaSecretFiles.keyPath(property), "is also named in kafka_secret_env; name the secret once"))
                }
                configuration.kafkaSecretFiles[property] = path
            }
        }
        root.absorb(kafkaSecretFiles)
        configuration.kafkaProducer = properties(&root, "kafka_producer", defaults: [:])
        if configuration.kafka["bootstrap.servers", default: ""].isEmpty {
            root.issues.append(.init(.error, "kafka.bootstrap.servers", "is required (comma-separated host:port list)"))
        }
        configuration.groupID = root.string("group_id", default: configuration.groupID)
        configuration.workerID = root.string("worker_id", default: workerID)

        var topics = root.object("topics")
        configuration.topics.requests = topics.string("requests", default: configuration.topics.requests)
        configuration.topics.results = topics.string("results", default: configuration.topics.results)
        configuration.topics.audit = topics.string("audit", default: configuration.topics.audit)
        configuration.topics.reconcile = topics.string("reconcile", default: configuration.topics.reconcile)
        configuration.topics.deadLetters = topics.string("dlq", default: configuration.topics.deadLetters)
        configuration.topics.parked = topics.string("dlq_parked", default: configuration.topics.parked)
        configuration.topics.markers = topics.string("markers", default: configuration.topics.markers)
        root.absorb(topics)

        var programs = root.object("programs")
        for name in programs.keys {
            var program = programs.object(name)
            if let parsed = ProgramConfiguration.parse(name: name, &program) { configuration.programs[name] = parsed }
            programs.absorb(program)
        }
        if requirePrograms && configuration.programs.isEmpty && programs.issues.isEmpty {
            programs.issues.append(.init(.error, "programs", "must name at least one program"))
        }
        root.absorb(programs)

        var results = root.object("results")
        configuration.requireEncryption = results.bool("require_encryption", default: true)
        configuration.mirrorReplies = results.bool("mirror_replies", default: false)
        if let value = results.raw("reply_topics"), let entries = ReplyRouting.Allowlist.entries(value, keyPath: "results.reply_topics", issues: &results.issues) {
            configuration.replyTopics = entries
        }
        root.absorb(results)

        var dlq = root.object("dlq")
        configuration.replaySigningSecret = secretSource(&dlq, "replay_signing_secret", required: false)
        configuration.replayKeys = signingKeys(&dlq, "replay_keys")
        root.absorb(dlq)
        if configuration.replayKeyList.isEmpty,
           let signed = configuration.programs.values.map(\.name).sorted().first(where: { configuration.programs[$0]?.signsRequests == true }) {
            root.issues.append(.init(.warning, "dlq.replay_signing_secret_env",
                                     "is not set: operator replays of dead letters of signed programs (\(signed), ...) will be refused unauthenticated"))
        }

        // Read by `provisioner console` (ConsoleConfiguration); workers ignore it.
        _ = root.raw("console")

        var audit = root.object("audit")
        configuration.pseudonymKeys = signingKeys(&audit, "pseudonym_keys", maxIDBytes: maximumPseudonymKeyIDBytes)
        let unnamedPseudonymKey = secretSource(&audit, "pseudonym_key", required: false)
        // Without either, the unnamed key is named by PROVISIONER_AUDIT_KEY.
        configuration.pseudonymKey = unnamedPseudonymKey ?? (configuration.pseudonymKeys.isEmpty ? configuration.pseudonymKey : nil)
        root.absorb(audit)

        var secrets = root.object("secrets")
        configuration.secretReloadIntervalMs = secrets.integer("reload_interval_ms", default: configuration.secretReloadIntervalMs, in: 100...600_000)
        root.absorb(secrets)

        var http = root.object("http")
        if let listen = http.raw("listen") {
            if listen.isNull { configuration.httpListen = nil } else if let text = listen.stringValue {
                if HostPort(text) == nil { http.issues.append(.init(.error, "http.listen", "must be host:port, found '\(text)'")) }
                configuration.httpListen = text
            } else {
                http.issues.append(.init(.error, "http.listen", "must be a host:port string"))
            }
        }
        configuration.caBundlePath = http.string("ca_bundle")
        root.absorb(http)

        var deadlines = root.object("deadlines")
        configuration.deadlines = DeadlinePolicy(
            applePayWindowMs: deadlines.integer("apple_pay_window_ms", default: 20_000, in: 1_000...20_000),
            googleWindowMs: deadlines.integer("google_window_ms", default: 60_000, in: 1_000...600_000),
            paymentWindowMs: deadlines.integer("payment_window_ms", default: 30_000, in: 1_000...600_000),
            replyMarginMs: deadlines.integer("reply_margin_ms", default: 1_000, in: 0...10_000),
            minimumIssuerBudgetMs: deadlines.integer("minimum_budget_ms", default: 500, in: 1...60_000))
        configuration.publishReserveMs = deadlines.integer("publish_reserve_ms", default: 200, in: 0...5_000)
        root.absorb(deadlines)

        var scheduler = root.object("scheduler")
        switch scheduler.string("ordering", default: "edf") {
        case "edf": configuration.scheduler.ordering = .earliestDeadlineFirst
        case "fifo": configuration.scheduler.ordering = .arrival
        case let other: scheduler.issues.append(.init(.error, "scheduler.ordering", "must be 'edf' or 'fifo', found '\(other)'"))
        }
        configuration.scheduler.globalLimit = scheduler.int("max_in_flight", default: 512, in: 1...100_000)
        configuration.maxPending = scheduler.int("max_pending", default: 4_096, in: 1...1_000_000)
        switch scheduler.string("limits_scope", default: "group") {
        case "group": configuration.scheduler.limitsPerWorker = false
        case "worker": configuration.scheduler.limitsPerWorker = true
        case let other: scheduler.issues.append(.init(.error, "scheduler.limits_scope", "must be 'group' or 'worker', found '\(other)'"))
        }
        var endpointLimits = scheduler.object("issuer_max_in_flight")
        for issuerName in endpointLimits.keys {
            let limit = endpointLimits.int(issuerName, default: 0, in: 1...100_000)
            guard IssuerKind(rawValue: issuerName) != nil else {
                endpointLimits.issues.append(.init(.error, "scheduler.issuer_max_in_flight.\(issuerName)", "is not an issuer (imprint, dcs, gnosis, worldpay)"))
                continue
            }
            for program in configuration.programs.values where program.issuer.rawValue == issuerName {
                configuration.scheduler.endpointLimits[program.endpoint] = limit
            }
        }
        scheduler.absorb(endpointLimits)
        if configuration.maxPending < configuration.scheduler.globalLimit {
            scheduler.issues.append(.init(.error, "scheduler.max_pending", "must be at least scheduler.max_in_flight (\(configuration.scheduler.globalLimit))"))
        }
        root.absorb(scheduler)
        for program in configuration.programs.values {
            if let limit = program.maxInFlight { configuration.scheduler.programLimits[program.name] = limit }
            if let rate = program.rateLimit { configuration.scheduler.rateLimits[program.name] = rate }
        }

        var breaker = root.object("breaker")
        if breaker.bool("enabled", default: true) {
            var settings = CircuitBreaker.Settings()
            settings.windowSeconds = breaker.int("window_seconds", default: 10, in: 1...600)
            settings.minimumCalls = breaker.int("minimum_calls", default: 20, in: 1...100_000)
            settings.failureRateThreshold = breaker.double("failure_rate", default: 0.5, in: 0.01...1)
            settings.openDurationMs = breaker.integer("open_ms", default: 5_000, in: 10...600_000)
            settings.halfOpenProbes = breaker.int("half_open_probes", default: 3, in: 1...1_000)
            configuration.scheduler.defaultBreaker = settings
        } else {
            configuration.scheduler.defaultBreaker = nil
            for key in ["window_seconds", "minimum_calls", "failure_rate", "open_ms", "half_open_probes"] { _ = breaker.raw(key) }
        }
        root.absorb(breaker)

        var reconcile = root.object("reconcile")
        if let tiers = reconcile.raw("tiers_ms") {
            let values = tiers.arrayValue?.compactMap { $0.int64Value } ?? []
            if values.isEmpty || values.count != tiers.arrayValue?.count || values.count > 100
                || values.contains(where: { $0 < 1 || $0 > 604_800_000 }) {
                reconcile.issues.append(.init(.error, "reconcile.tiers_ms",
                                              "must be a non-empty array of at most 100 whole milliseconds, each 1 to 604800000 (7 days)"))
            } else {
                configuration.reconcileTiersMs = values
            }
        }
        configuration.reconcileMaxHeldPerPartition = reconcile.int("max_held_per_partition", default: 1_000, in: 2...1_000_000)
        configuration.reconcileApplyHorizonMs = reconcile.integer("apply_horizon_ms", default: 5_000, in: 0...3_600_000)
        root.absorb(reconcile)

        var nonce = root.object("nonce_guard")
        configuration.nonceHorizonMs = nonce.integer("horizon_seconds", default: 900, in: 30...86_400) * 1000
        root.absorb(nonce)
        var duplicates = root.object("duplicates")
        configuration.duplicateHorizonMs = duplicates.integer("horizon_seconds", default: 86_400, in: 1...604_800) * 1000
        configuration.duplicateIndexMaxBytes = duplicates.int("max_bytes", default: 256 << 20, in: 65_536...(64 << 30))
        // A per-partition entry cap was replaced by the byte budget: a file that still sets it
        // starts (the budget applies) and is told so, even under --strict.
        if duplicates.raw("max_entries_per_partition") != nil {
            duplicates.issues.append(.init(.warning, "duplicates.max_entries_per_partition",
                                           "is no longer read: duplicates.max_bytes bounds the duplicate index of all partitions together"))
        }
        root.absorb(duplicates)
        var shutdown = root.object("shutdown")
        configuration.shutdownDrainMs = shutdown.integer("drain_timeout_ms", default: 20_000, in: 0...600_000)
        root.absorb(shutdown)
        var rebalance = root.object("rebalance")
        let configuredDrain = rebalance.keys.contains("drain_timeout_ms")
        configuration.revokeDrainMs = rebalance.integer("drain_timeout_ms", default: 5_000, in: 0...300_000)
        // A revoke waits for the calls in flight to end and be decided (at most the longest program
        // timeout plus the publish reserve), so the previous owner answers instead of handing over.
        let callBound = configuration.revokeDrainFloorMs
        if configuration.revokeDrainMs < callBound {
            if configuredDrain {
                rebalance.issues.append(.init(.warning, "rebalance.drain_timeout_ms",
                                              "\(configuration.revokeDrainMs) is below the longest program timeout plus deadlines.publish_reserve_ms (\(callBound)): raised to \(callBound), so a revoke lets the calls in flight finish"))
            }
            configuration.revokeDrainMs = callBound
        }
        root.absorb(rebalance)
        var publish = root.object("publish")
        configuration.publishAttempts = publish.int("max_attempts", default: 5, in: 1...100)
        root.absorb(publish)
        var tracing = root.object("tracing")
        let sampleRatio = tracing.double("sample_ratio", default: 1.0, in: 0...1)
        let maxQueue = tracing.int("max_queue", default: 10_000, in: 1...1_000_000)
        if let endpoint = tracing.string("otlp_endpoint") {
            if endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") {
                var settings = TracingSettings(endpoint: endpoint)
                settings.sampleRatio = sampleRatio
                settings.maxQueue = maxQueue
                configuration.tracing = settings
            } else {
                tracing.issues.append(.init(.error, "tracing.otlp_endpoint", "must be an http:// or https:// URL, found '\(endpoint)'"))
            }
        }
        root.absorb(tracing)
        var log = root.object("log")
        let levelName = log.string("level", default: "info")
        if let level = LogLevel(name: levelName) { configuration.logLevel = level } else {
            log.issues.append(.init(.error, "log.level", "must be one of debug, info, notice, warning, error; found '\(levelName)'"))
        }
        root.absorb(log)

        issues += root.issues + root.unknownKeyIssues()
        return configuration
    }

    private static func properties(_ reader: inout ConfigurationReader, _ key: String, defaults: [String: String]) -> [String: String] {
        var nested = reader.object(key)
        var result = nested.members.isEmpty ? defaults : [:]
        for name in nested.keys {
            guard let value = nested.raw(name) else { continue }
            switch value {
            case .string(let text): result[name] = text
            case .number(let number): result[name] = number.literal
            case .bool(let flag): result[name] = flag ? "true" : "false"
            default: nested.issues.append(.init(.error, nested.keyPath(name), "must be a string, number or Boolean (librdkafka properties are passed through verbatim)"))
            }
        }
        reader.issues += nested.issues
        return result
    }
}
