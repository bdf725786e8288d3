import Contract
import Foundation
import HTTP
import Kafka
import Observability
@testable import Pipeline
import Recovery
import Simulator
import Testing
import TestSupport

/// `Deploy/grafana/provisioner.json` against a real worker's `/metrics`:
/// every metric and label the dashboard queries is one the worker exposes, and what it exposes
/// follows the Prometheus conventions of ENGINEERING.md (`_total` counters, base units, bounded
/// label values).
@Suite("Deploy/grafana: the dashboard queries what the worker exposes; /metrics follows Prometheus conventions", .serialized, .timeLimit(.minutes(10)))
struct DashboardTests {
    static let dashboardPath = "Deploy/grafana/provisioner.json"

    /// Names kept for one release because earlier READMEs promised them, with their replacement.
    /// Remove an entry (and the export in WorkerMetrics.swift) in the release after.
    static let deprecated: [String: String] = [
        "provisioner_issuer_latency_ms": "provisioner_issuer_latency_seconds",
        "provisioner_end_to_end_latency_ms": "provisioner_end_to_end_latency_seconds",
        "provisioner_overhead_ms": "provisioner_overhead_seconds",
    ]

    /// Labels Prometheus attaches at scrape time (not the worker's): a panel may group by them.
    static let targetLabels: Set<String> = ["instance", "job"]

    /// Metrics the dashboard must chart (the issue's list: throughput by status, deadline misses,
    /// latency quantiles, lag, breakers, dead letters, in-flight calls, authenticity, guards).
    static let required: Set<String> = [
        "provisioner_requests_total", "provisioner_deadline_misses_total",
        "provisioner_end_to_end_latency_seconds_bucket", "provisioner_overhead_seconds_bucket",
        "provisioner_consumer_lag", "provisioner_paused_partitions", "provisioner_breaker_state",
        "provisioner_breaker_transitions_total", "provisioner_dead_letters_total", "provisioner_in_flight",
        "provisioner_unauthenticated_total", "provisioner_nonce_guard_evictions_total",
        "provisioner_duplicate_filter_evictions_total",
    ]

    /// Reconciliation outcomes: the words ReconcileRunner passes to `countReconcile`.
    static let reconcileOutcomes = Set(WorkerMetrics.reconcileOutcomes)

    /// Unit words that are not Prometheus base units.
    static let nonBaseUnits: Set<String> = [
        "ms", "msec", "millis", "milliseconds", "us", "micros", "microseconds", "ns", "nanoseconds", "minutes", "hours", "days",
        "kb", "kib", "kilobytes", "mb", "mib", "megabytes", "gb", "gib", "gigabytes",
    ]

    /// Words that make a histogram a duration (so it must be in `_seconds`).
    static let durationWords: Set<String> = ["latency", "duration", "overhead", "time", "age", "delay", "wait"]

    // MARK: - The dashboard's queries

    /// One PromQL query of the dashboard and where it is.
    struct Query {
        var location: String
        var expr: String
        var legend: String?
    }

    /// Every target `expr` of every panel (rows' nested panels included).
    static func queries(_ dashboard: JSONValue) -> [Query] {
        func walk(_ panels: [JSONValue]) -> [Query] {
            panels.flatMap { panel -> [Query] in
                let title = panel["title"]?.stringValue ?? "untitled"
                let own = (panel["targets"]?.arrayValue ?? []).compactMap { target -> Query? in
                    guard let expr = target["expr"]?.stringValue else { return nil }
                    return Query(location: "panel '\(title)' \(target["refId"]?.stringValue ?? "?")", expr: expr,
                                 legend: target["legendFormat"]?.stringValue)
                }
                return own + walk(panel["panels"]?.arrayValue ?? [])
            }
        }
        return walk(dashboard["panels"]?.arrayValue ?? [])
    }

    /// `label_values(metric, label)` queries of the dashboard's template variables.
    static func variableQueries(_ dashboard: JSONValue) -> [(location: String, metric: String, label: String)] {
        let pattern = try! NSRegularExpression(pattern: #"^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*(?:\{[^}]*\})?\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$"#)
        return (dashboard.at("templating.list")?.arrayValue ?? []).compactMap { variable in
            guard variable["type"]?.stringValue == "query" else { return nil }
            let text = variable["query"]?["query"]?.stringValue ?? variable["query"]?.stringValue ?? ""
            let name = variable["name"]?.stringValue ?? "?"
            guard let match = pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                  let metric = Range(match.range(at: 1), in: text), let label = Range(match.range(at: 2), in: text) else {
                return ("variable '\(name)'", "<not label_values(metric, label): \(text)>", "")
            }
            return ("variable '\(name)'", String(text[metric]), String(text[label]))
        }
    }

    /// What is wrong with the dashboard's queries against `exposed` (empty when nothing is).
    static func dashboardProblems(_ dashboard: JSONValue, exposed: Exposition) -> [String] {
        var problems: [String] = []
        let names = exposed.sampleNames
        var queried: Set<String> = []
        for query in queries(dashboard) {
            let found = PromQLNames.names(in: query.expr)
            problems += found.problems.map { "\(query.location): \($0)" }
            if found.metrics.isEmpty { problems.append("\(query.location): no metric in '\(query.expr)'") }
            var available = targetLabels
            for metric in found.metrics.sorted() {
                queried.insert(metric)
                if !names.contains(metric) {
                    problems.append("\(query.location): '\(metric)' is not a series the worker exposes (expr: \(query.expr))")
                }
                if let family = exposed.family(of: metric), let replacement = deprecated[family] {
                    problems.append("\(query.location): '\(metric)' is deprecated, query \(replacement)")
                }
                available.formUnion(exposed.labelNames(of: metric))
            }
            for label in found.labels.subtracting(available).sorted() {
                problems.append("\(query.location): label '\(label)' is not on \(found.metrics.sorted()) (expr: \(query.expr))")
            }
            for label in PromQLNames.legendLabels(query.legend ?? "").subtracting(found.labels).sorted() {
                problems.append("\(query.location): legend {{\(label)}} is not a label the query keeps")
            }
            if found.functions.contains("histogram_quantile") {
                let bucketed = found.metrics.allSatisfy { $0.hasSuffix("_bucket") } && found.labels.contains("le")
                    && (found.functions.contains("rate") || found.functions.contains("irate"))
                if !bucketed { problems.append("\(query.location): histogram_quantile needs rate(…_bucket) summed by le: \(query.expr)") }
            }
        }
        for variable in variableQueries(dashboard) {
            queried.insert(variable.metric)
            if !names.contains(variable.metric) { problems.append("\(variable.location): '\(variable.metric)' is not exposed") }
            if !exposed.labelNames(of: variable.metric).contains(variable.label) {
                problems.append("\(variable.location): '\(variable.metric)' has no label '\(variable.label)'")
            }
        }
        for metric in required.subtracting(queried).sorted() {
            problems.append("the dashboard charts no \(metric)")
        }
        return problems
    }

    // MARK: - Conventions over /metrics

    /// The bounded set of each label name the worker may use: true when `value` belongs to it.
    /// `topics`: the worker's configured topics; `partitions`: the most any of them has.
    /// `brokers`: the node ids of the cluster's brokers.
    static func boundedSets(programs: Set<String>, endpoints: Set<String>, topics: Set<String> = [], partitions: Int = 0,
                            brokers: Set<String> = []) -> [String: (String) -> Bool] {
        let unknown = WorkerMetrics.unknownLabel
        return [
            "topic": { topics.contains($0) },
            "partition": { Int($0).map { (0..<partitions).contains($0) } ?? false },
            "program": { programs.contains($0) || $0 == unknown },
            "issuer": { IssuerKind(rawValue: $0) != nil },
            "wallet": { Wallet(rawValue: $0) != nil || $0 == unknown },
            "status": { ResultStatus(rawValue: $0) != nil },
            "code": { DeadLetterCode.defined.contains(DeadLetterCode(rawValue: $0)) || $0 == WorkerMetrics.otherLabel },
            "reason": { SchedulerRefusal(rawValue: $0) != nil || $0 == unknown },
            "state": { CircuitBreaker.State(rawValue: $0) != nil || $0 == unknown },
            "endpoint": { endpoints.contains($0) || $0 == unknown },
            "outcome": { reconcileOutcomes.contains($0) },
            "parked": { $0 == "true" || $0 == "false" },
            "replay": { $0 == "true" || $0 == "false" },
            "refusal": { KafkaError.Refusal(rawValue: $0) != nil },
            "verdict": { value in MarkerFencing.Confirmation.allCases.contains { $0.label == value } || FinalDecider.Verdict.labels.contains(value) },
            "le": { $0 == "+Inf" || Double($0) != nil },
            "version": { $0 == KafkaRuntime.version },
            "client": { KafkaStatisticsMetrics.Client(rawValue: $0) != nil },
            "broker": { brokers.contains($0) },
            "fetch_state": { KafkaStatisticsMetrics.fetchStates.contains($0) || $0 == WorkerMetrics.otherLabel },
            "readable": { $0 == "true" || $0 == "false" },
        ]
    }

    /// What in `exposition` breaks the conventions (empty when nothing does).
    static func conventionProblems(_ exposition: Exposition, programs: Set<String>, endpoints: Set<String>,
                                   topics: Set<String> = [], partitions: Int = 0, brokers: Set<String> = []) -> [String] {
        var problems = exposition.problems
        for (name, kind) in exposition.types.sorted(by: { $0.key < $1.key }) {
            if !name.hasPrefix("provisioner_") { problems.append("\(name): not under provisioner_") }
            if exposition.help[name]?.isEmpty ?? true { problems.append("\(name): no HELP") }
            if kind == "counter" && !name.hasSuffix("_total") { problems.append("\(name): a counter whose name does not end in _total") }
            if kind != "counter" && name.hasSuffix("_total") { problems.append("\(name): a \(kind) whose name ends in _total") }
            let words = Set(name.split(separator: "_").map { $0.lowercased() })
            if let replacement = deprecated[name] {
                if exposition.types[replacement] != kind { problems.append("\(name): deprecated, but its replacement \(replacement) is not exported as a \(kind)") }
                if !(exposition.help[name] ?? "").hasPrefix("Deprecated") { problems.append("\(name): deprecated, but its HELP does not say so") }
                let count = exposition.samples.first { $0.name == name + "_count" }?.value
                let newCount = exposition.samples.first { $0.name == replacement + "_count" }?.value
                if count != newCount { problems.append("\(name): counts \(count ?? "nothing"), its replacement \(newCount ?? "nothing")") }
                // Same buckets, in ms: each `_ms` bucket counts what the `_seconds` bucket at le / 1000 counts.
                let seconds = exposition.samples.filter { $0.name == replacement + "_bucket" }
                for bucket in exposition.samples where bucket.name == name + "_bucket" {
                    let le = bucket.labels["le"].flatMap(Double.init) ?? .infinity
                    let twin = seconds.first { (($0.labels["le"].flatMap(Double.init)) ?? .infinity) == le / 1_000 }
                    if twin?.value != bucket.value {
                        problems.append("\(name)_bucket le=\(bucket.labels["le"] ?? "?") counts \(bucket.value), \(replacement) \(twin?.value ?? "has no such bucket")")
                    }
                }
                continue
            }
            for unit in words.intersection(nonBaseUnits).sorted() {
                problems.append("\(name): unit '\(unit)' is not a base unit (use _seconds or _bytes)")
            }
            if kind == "histogram" && !words.isDisjoint(with: durationWords) && !name.hasSuffix("_seconds") {
                problems.append("\(name): a duration histogram whose name does not end in _seconds")
            }
        }
        let bounded = boundedSets(programs: programs, endpoints: endpoints, topics: topics, partitions: partitions, brokers: brokers)
        var reported: Set<String> = []
        for sample in exposition.samples {
            guard let family = exposition.family(of: sample.name) else {
                problems.append("\(sample.name): a series without a # TYPE line")
                continue
            }
            for (label, value) in sample.labels.sorted(by: { $0.key < $1.key }) {
                if label == "le" && !sample.name.hasSuffix("_bucket") { problems.append("\(sample.name): le outside a bucket") }
                guard let belongs = bounded[label] else {
                    if reported.insert("\(family) \(label)").inserted {
                        problems.append("\(family): label '\(label)' has no known bounded set (add one to DashboardTests.boundedSets)")
                    }
                    continue
                }
                if !belongs(value) { problems.append("\(sample.name): \(label)=\"\(value)\" is outside its bounded set") }
            }
        }
        return problems
    }

    // MARK: - A real worker under a small load

    struct Scrape: Sendable {
        var text: String
        var programs: Set<String>
        var endpoints: Set<String>
        /// The worker's configured topics and their partition count (the `topic` and `partition` labels' sets).
        var topics: Set<String>
        var partitions: Int
        /// The node ids of the cluster's brokers (the `broker` label's set).
        var brokers: Set<String>
    }

    /// One scrape shared by the tests that need it (starting a worker takes seconds).
    static let scraped = Task<Scrape, any Error> { try await loadAndScrape() }

    /// Starts a worker on the embedded stack (DCS answering 503, Gnosis requiring signatures,
    /// Imprint rate-limited), sends messages that create the labelled series (provisioned, a
    /// duplicate, expired, unauthenticated, a 504 reconciled, breaker opened then refusing), waits
    /// until each has been counted, and returns its `/metrics`.
    static func loadAndScrape() async throws -> Scrape {
        var profile = SimulatorProfile()
        var down = LoadRule()
        down.unavailableRate = 1
        profile.issuerRules[.dcs] = down
        let stack = try EmbeddedStack(partitions: 2, profile: profile)
        defer { stack.stop() }
        var environment = stack.environment
        environment["DASHBOARD_GNOSIS_SIGNING"] = "dashboard-signing-" + Crypto.hex(Crypto.randomBytes(16))
        let configuration = try stack.configuration(groupID: UniqueName.make("dashboard"), workerID: "dashboard-w1") { configuration in
            // librdkafka's statistics series come with the first report: soon, not after the default 15 s.
            configuration.kafkaConsumer["statistics.interval.ms"] = "500"
            configuration.kafkaProducer["statistics.interval.ms"] = "500"
            var breaker = CircuitBreaker.Settings()
            breaker.windowSeconds = 30
            breaker.minimumCalls = 3
            breaker.failureRateThreshold = 0.5
            breaker.openDurationMs = 120_000
            configuration.scheduler.defaultBreaker = breaker
            configuration.programs["demo-gnosis"]?.requestSigningSecret = .environment("DASHBOARD_GNOSIS_SIGNING")
            // As the loader does for a program's `rate_limit`: the program's and the scheduler's copy.
            configuration.programs["demo-imprint"]?.rateLimit = .init(perSecond: 1_000, burst: 1_000)
            configuration.scheduler.rateLimits["demo-imprint"] = .init(perSecond: 1_000, burst: 1_000)
        }
        let registry = MetricsRegistry()
        let worker = try Worker(configuration: configuration, environment: environment,
                                logger: Logger(label: "dashboard", minimumLevel: .error, handler: CapturingLogHandler()), metrics: registry)
        try worker.start()
        defer {
            worker.shutdown()
            worker.waitUntilStopped()
        }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 1)
        func send(_ value: [UInt8], key: [UInt8]?) throws {
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: key, value: value)) { _ in }
        }
        func send(_ request: GeneratedRequest) throws { try send(request.value, key: request.key) }
        func wait(_ what: String, timeoutMs: Int64 = 90_000, until condition: () -> Bool) async throws {
            guard try await Eventually.holds(within: .milliseconds(timeoutMs), every: .milliseconds(50), condition) else {
                throw TestSupportError("\(what) within \(timeoutMs / 1_000) s")
            }
        }
        try await wait("partitions assigned") { worker.assignedPartitionCount == stack.partitions }

        let provisioned = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_dash_ok")
        try send(provisioned)
        try send(provisioned)  // a duplicate
        try send(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_dash_late",
                                       startedAtMs: Timestamps.nowMs() - 30_000))  // expired
        // With a program requiring signatures, messages no signing program vouches for (an unknown
        // program, not JSON) are unauthenticated too (CONTRACT-NOTES), like the unsigned Gnosis one.
        try send(try factory.provision(program: "no-such-program", wallet: .googlePay, cardID: "pm_dash_stranger"))
        try send(Array("not json".utf8), key: nil)
        try send(try factory.provision(program: "demo-gnosis", wallet: .googlePay, cardID: "pm_dash_unsigned"))
        try send(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_dash-timeout-applied"))  // reconciled
        for index in 0..<3 {  // 503s open DCS's breaker
            try send(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_dash_down_\(index)", opcRequested: false))
        }
        try await wait("DCS's breaker opened") { registry.total("provisioner_breaker_transitions_total", matching: ["state": "open"]) > 0 }
        try send(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_dash_refused", opcRequested: false))
        for family in ["provisioner_requests_total", "provisioner_expired_total", "provisioner_duplicates_ignored_total",
                       "provisioner_dead_letters_total", "provisioner_unauthenticated_total", "provisioner_refusals_total",
                       "provisioner_reconcile_total", "provisioner_end_to_end_latency_seconds", "provisioner_overhead_seconds",
                       "provisioner_issuer_latency_seconds"] {
            try await wait("\(family) counted") { registry.total(family) > 0 }
        }
        try await wait("two statistics reports read from each Kafka client") {
            KafkaStatisticsMetrics.Client.allCases.allSatisfy { client in
                (registry.value(KafkaStatisticsMetrics.Name.reports, labels: ["client": client.rawValue, "readable": "true"]) ?? 0) >= 2
            }
        }
        let port = try #require(worker.observabilityPort, "the worker serves no /metrics")
        let client = HTTPClient()
        defer { client.shutdown() }
        let response = try await client.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)/metrics", timeoutMs: 10_000)).get()
        try #require(response.status == 200, "/metrics answered \(response.status)")
        return Scrape(text: response.body.string, programs: Set(configuration.programs.keys),
                      endpoints: Set(configuration.programs.values.map(\.endpoint)),
                      topics: [configuration.topics.requests, configuration.topics.reconcile], partitions: stack.partitions,
                      brokers: Set(stack.cluster.brokerIDs.map(String.init)))
    }

    // MARK: - Tests

    @Test("the dashboard is a Grafana JSON model: schemaVersion 39+, a Prometheus ${datasource} variable every panel and query uses")
    func dashboardModel() throws {
        let dashboard = try Repository.json(Self.dashboardPath)
        #expect((dashboard["schemaVersion"]?.int64Value ?? 0) >= 39)
        #expect(dashboard["uid"]?.stringValue?.isEmpty == false && dashboard["title"]?.stringValue?.isEmpty == false)
        let variables = dashboard.at("templating.list")?.arrayValue ?? []
        #expect(variables.contains { $0["name"]?.stringValue == "datasource" && $0["type"]?.stringValue == "datasource"
                && $0["query"]?.stringValue == "prometheus" }, "no ${datasource} variable of Prometheus data sources")
        func panels(_ list: [JSONValue]) -> [JSONValue] { list.flatMap { [$0] + panels($0["panels"]?.arrayValue ?? []) } }
        let all = panels(dashboard["panels"]?.arrayValue ?? [])
        #expect(all.count > 10)
        var ids: Set<Int64> = []
        for panel in all {
            let title = panel["title"]?.stringValue ?? "untitled"
            if let id = panel["id"]?.int64Value { #expect(ids.insert(id).inserted, "panel id \(id) repeated") }
            guard panel["type"]?.stringValue != "row" else { continue }
            #expect(panel["datasource"]?["uid"]?.stringValue == "${datasource}", "panel '\(title)' does not use ${datasource}")
            let targets = panel["targets"]?.arrayValue ?? []
            #expect(!targets.isEmpty, "panel '\(title)' has no query")
            for target in targets {
                #expect(target["datasource"]?["uid"]?.stringValue == "${datasource}", "a query of '\(title)' does not use ${datasource}")
                #expect(target["expr"]?.stringValue?.isEmpty == false, "a query of '\(title)' has no expr")
            }
        }
    }

    @Test("every metric and label the dashboard queries is exposed on /metrics by a worker that has seen a small load")
    func dashboardQueriesExposedNames() async throws {
        let scrape = try await Self.scraped.value
        let dashboard = try Repository.json(Self.dashboardPath)
        #expect(Self.queries(dashboard).count >= 20)
        let problems = Self.dashboardProblems(dashboard, exposed: Exposition(scrape.text))
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
    }

    @Test("/metrics: counters end in _total, base units (_seconds, _bytes) except the listed deprecated names, label values bounded")
    func exposedNamesFollowConventions() async throws {
        let scrape = try await Self.scraped.value
        let exposition = Exposition(scrape.text)
        #expect(exposition.types.count >= 25, "families exposed: \(exposition.types.keys.sorted())")
        for (old, new) in Self.deprecated {
            #expect(exposition.types[old] == "histogram" && exposition.types[new] == "histogram", "\(old) and \(new) are both exported")
        }
        let problems = Self.conventionProblems(exposition, programs: scrape.programs, endpoints: scrape.endpoints,
                                               topics: scrape.topics, partitions: scrape.partitions, brokers: scrape.brokers)
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
    }

    @Test("the checks catch a misspelled metric, a label the metric lacks, a deprecated name, a ms counter without _total, an unbounded label")
    func checksCanFail() throws {
        let exposed = Exposition("""
            # HELP provisioner_requests_total Results.
            # TYPE provisioner_requests_total counter
            provisioner_requests_total{program="demo-imprint",status="provisioned",wallet="google_pay"} 3
            provisioner_requests_total{program="req-8c1f2a",status="provisioned",wallet="google_pay"} 1
            # HELP provisioner_issuer_latency_ms Deprecated, removed in the next release: provisioner_issuer_latency_seconds in milliseconds.
            # TYPE provisioner_issuer_latency_ms histogram
            provisioner_issuer_latency_ms_bucket{le="+Inf"} 1
            provisioner_issuer_latency_ms_count 1
            # HELP provisioner_call_ms Calls.
            # TYPE provisioner_call_ms counter
            provisioner_call_ms{card="pm_123"} 1
            # HELP provisioner_partition_paused Paused.
            # TYPE provisioner_partition_paused gauge
            provisioner_partition_paused{partition="1",topic="requests"} 1
            provisioner_partition_paused{partition="7",topic="requests"} 0
            provisioner_partition_paused{partition="2",topic="req-8c1f2a"} 0
            """)
        let real = try Repository.json(Self.dashboardPath)
        let realExpr = try #require(Self.queries(real).first { $0.expr.contains("provisioner_requests_total") }?.expr)
        func dashboard(_ exprs: [String]) -> JSONValue {
            .object(["panels": .array(exprs.map { expr in
                .object(["title": .string("t"), "targets": .array([.object(["refId": .string("A"), "expr": .string(expr),
                                                                           "legendFormat": .string("{{wallet}}")])])])
            })])
        }
        func problems(_ expr: String) -> [String] {
            Self.dashboardProblems(dashboard([expr]), exposed: exposed).filter { !$0.hasPrefix("the dashboard charts no") }
        }
        #expect(problems(#"sum by (wallet) (rate(provisioner_requests_total[5m]))"#).isEmpty)
        #expect(problems(realExpr.replacingOccurrences(of: "provisioner_requests_total", with: "provisioner_request_total"))
            .contains { $0.contains("'provisioner_request_total' is not a series") })
        #expect(problems(#"sum by (wallet, endpoint) (rate(provisioner_requests_total[5m]))"#).contains { $0.contains("label 'endpoint'") })
        #expect(problems(#"sum by (wallet) (rate(provisioner_requests_total{stauts="failed"}[5m]))"#).contains { $0.contains("label 'stauts'") })
        #expect(problems(#"sum by (status) (rate(provisioner_requests_total[5m]))"#).contains { $0.contains("legend {{wallet}}") })
        #expect(problems(#"sum by (wallet) (reate(provisioner_requests_total[5m]))"#).contains { $0.contains("'reate' is not a PromQL function") })
        #expect(problems(#"histogram_quantile(0.99, sum by (le, wallet) (rate(provisioner_issuer_latency_ms_bucket[5m])))"#)
            .contains { $0.contains("deprecated") })
        #expect(Self.dashboardProblems(dashboard([#"sum(provisioner_requests_total)"#]), exposed: exposed)
            .contains { $0 == "the dashboard charts no provisioner_deadline_misses_total" })

        let conventions = Self.conventionProblems(exposed, programs: ["demo-imprint"], endpoints: [], topics: ["requests"], partitions: 3)
        #expect(conventions.contains("provisioner_call_ms: a counter whose name does not end in _total"))
        #expect(conventions.contains("provisioner_call_ms: unit 'ms' is not a base unit (use _seconds or _bytes)"))
        #expect(conventions.contains { $0.contains("label 'card' has no known bounded set") })
        #expect(conventions.contains { $0.contains(#"program="req-8c1f2a" is outside its bounded set"#) })
        #expect(conventions.contains { $0.contains("its replacement provisioner_issuer_latency_seconds is not exported") })
        #expect(!conventions.contains { $0.contains("provisioner_requests_total: a counter") })
        #expect(conventions.contains { $0.contains(#"partition="7" is outside its bounded set"#) })
        #expect(conventions.contains { $0.contains(#"topic="req-8c1f2a" is outside its bounded set"#) })
        #expect(!conventions.contains { $0.contains(#"partition="1""#) || $0.contains(#"topic="requests""#) })
    }
}
