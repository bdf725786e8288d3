import Contract
import Pipeline

/// Where a test or demo stack's parts listen, and what a worker or a client needs to reach them:
/// the Kafka bootstrap servers (librdkafka's mock cluster in `EmbeddedStack`, or a separate broker
/// process), the issuer simulator's URL and the audit pseudonym key.
public struct StackEndpoints: Sendable {
    /// `host:port,...` of the Kafka cluster.
    public var bootstrapServers: String
    /// The simulator's base URL.
    public var simulatorURL: String
    /// A random key for `card_ref` / `device_ref` pseudonyms.
    public var auditKey: String
    /// Pipeline topic names.
    public var topics = TopicNames()
    /// Consumer properties a worker's configuration adds (`PROVISIONER_KAFKA_CONSUMER__...` overrides,
    /// e.g. a session timeout a broker requires); empty for the mock cluster.
    public var workerConsumerOverrides: [String: String] = [:]
    /// librdkafka properties every client adds (security settings of a cluster that needs them:
    /// `security.protocol`, `sasl.*`, `ssl.*`); empty for the mock cluster and noida-db.
    public var clientProperties: [String: String] = [:]

    /// Endpoints of a cluster at `bootstrapServers` and a simulator at `simulatorURL`, with a fresh audit key.
    public init(bootstrapServers: String, simulatorURL: String, workerConsumerOverrides: [String: String] = [:]) {
        self.bootstrapServers = bootstrapServers
        self.simulatorURL = simulatorURL
        self.workerConsumerOverrides = workerConsumerOverrides
        auditKey = Crypto.hex(Crypto.randomBytes(32))
    }

    /// librdkafka properties for test and demo consumers: a low fetch wait (the mock answers a
    /// fetch only after `fetch.wait.max.ms`).
    public var consumerProperties: [String: String] {
        clientProperties.merging(["bootstrap.servers": bootstrapServers, "fetch.wait.max.ms": "10"]) { _, own in own }
    }

    /// librdkafka properties for test and demo producers: no linger.
    public var producerProperties: [String: String] {
        clientProperties.merging(["bootstrap.servers": bootstrapServers, "linger.ms": "0"]) { _, own in own }
    }

    /// The environment a worker of this stack sees: the demo credentials, the audit key and the
    /// overrides pointing the demo configuration at this broker and simulator.
    public var environment: [String: String] {
        var environment = DemoConfiguration.secrets
        environment["PROVISIONER_AUDIT_KEY"] = auditKey
        environment["PROVISIONER_KAFKA__BOOTSTRAP_SERVERS"] = bootstrapServers
        for program in DemoConfiguration.programs {
            let issuer = program.replacingOccurrences(of: "demo-", with: "")
            environment["PROVISIONER_PROGRAMS__\(Self.variablePart(program))__BASE_URL"] = "\(simulatorURL)/\(issuer)"
        }
        for (key, value) in workerConsumerOverrides {
            environment["PROVISIONER_KAFKA_CONSUMER__\(Self.variablePart(key))"] = value
        }
        return environment
    }

    /// The demo configuration as a file-ready JSON document with these addresses, client
    /// properties and topic names (for workers started as separate processes), plus the
    /// environment they need.
    public func configurationFileText(groupID: String) -> String {
        let kafka = clientProperties.merging(["bootstrap.servers": bootstrapServers]) { _, own in own }.mapValues(JSONValue.string)
        var text = DemoConfiguration.json.replacingOccurrences(of: #""kafka": { "bootstrap.servers": "127.0.0.1:9092" }"#,
                                                               with: #""kafka": "# + String(decoding: JSONWriter.encode(.object(kafka)), as: UTF8.self))
        for (name, role) in [(topics.requests, "requests"), (topics.results, "results"), (topics.audit, "audit"), (topics.reconcile, "reconcile"),
                             (topics.deadLetters, "dlq"), (topics.parked, "dlq_parked"), (topics.markers, "markers")] {
            let line = #""\#(role)": "#
            guard let start = text.range(of: line), let end = text[start.upperBound...].firstIndex(where: { $0 == "," || $0 == "\n" }) else { continue }
            text.replaceSubrange(start.upperBound..<end, with: String(decoding: JSONWriter.encode(.string(name)), as: UTF8.self))
        }
        text = text.replacingOccurrences(of: "http://127.0.0.1:8081", with: simulatorURL)
        text = text.replacingOccurrences(of: "\"provisioner-demo\"", with: "\"\(groupID)\"")
        return text.replacingOccurrences(of: "127.0.0.1:9464", with: "127.0.0.1:0")
    }

    /// `session.timeout.ms` → `SESSION_TIMEOUT_MS`, `demo-imprint` → `DEMO_IMPRINT`: a name as the
    /// configuration's environment overrides spell it.
    private static func variablePart(_ name: String) -> String {
        name.uppercased().replacingOccurrences(of: "-", with: "_").replacingOccurrences(of: ".", with: "_")
    }
}
