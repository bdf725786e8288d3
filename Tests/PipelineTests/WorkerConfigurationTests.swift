import Testing
import Foundation
import Contract
@testable import Pipeline

@Suite("Worker configuration", .timeLimit(.minutes(10)))
struct WorkerConfigurationTests {
    static let secrets = [
        "DEMO_IMPRINT_API_KEY": "k1", "DEMO_DCS_API_KEY": "k2", "DEMO_DCS_API_SECRET": "s2",
        "DEMO_GNOSIS_TOKEN": "k3", "DEMO_WORLDPAY_API_KEY": "k4", "PROVISIONER_AUDIT_KEY": "audit",
    ]

    static let minimal = """
    {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
     "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example/", "api_key_env": "ACME_KEY"}}}
    """

    func load(_ text: String, env: [String: String] = [:], strict: Bool = true) throws(ConfigurationError) -> (WorkerConfiguration, [ConfigurationIssue]) {
        try WorkerConfiguration.load(json: text, environment: ["ACME_KEY": "x", "PROVISIONER_AUDIT_KEY": "a"].merging(env) { $1 },
                                     workerID: "w1", strict: strict)
    }

    @Test func readsTheContractDefaultShape() throws {
        let text = """
        {
          "kafka": { "bootstrap.servers": "127.0.0.1:9092" },
          "group_id": "provisioner",
          "topics": { "requests": "provisioning.requests", "results": "provisioning.results",
                      "audit": "provisioning.audit", "reconcile": "provisioning.reconcile",
                      "dlq": "provisioning.dlq" },
          "programs": {
            "demo-imprint":  { "issuer": "imprint",  "base_url": "http://127.0.0.1:8081/imprint", "api_key_env": "DEMO_IMPRINT_API_KEY" },
            "demo-dcs":      { "issuer": "dcs",      "base_url": "http://127.0.0.1:8081/dcs", "api_key_env": "DEMO_DCS_API_KEY", "api_secret_env": "DEMO_DCS_API_SECRET" },
            "demo-gnosis":   { "issuer": "gnosis",   "base_url": "http://127.0.0.1:8081/gnosis", "api_key_env": "DEMO_GNOSIS_TOKEN" },
            "demo-worldpay": { "issuer": "worldpay", "base_url": "http://127.0.0.1:8081/worldpay", "api_key_env": "DEMO_WORLDPAY_API_KEY" }
          },
          "results": { "require_encryption": true },
          "audit": { "pseudonym_key_env": "PROVISIONER_AUDIT_KEY" },
          "http": { "listen": "127.0.0.1:9464" }
        }
        """
        let (configuration, issues) = try WorkerConfiguration.load(json: text, environment: Self.secrets, workerID: "w", strict: true)
        #expect(issues.isEmpty)
        #expect(configuration.programs.count == 4)
        #expect(configuration.program("demo-dcs")?.issuer == .dcs)
        #expect(configuration.program("demo-dcs")?.apiSecretEnvironmentVariable == "DEMO_DCS_API_SECRET")
        #expect(configuration.topics.deadLetters == "provisioning.dlq")
        #expect(configuration.topics.markers == "provisioning.markers")
        #expect(configuration.consumerProperties["group.id"] == "provisioner")
        #expect(configuration.httpListen == "127.0.0.1:9464")
    }

    @Test func trailingSlashIsRemovedFromBaseURLs() throws {
        let (configuration, _) = try load(Self.minimal)
        #expect(configuration.program("acme")?.baseURL == "https://api.imprint.example")
    }

    @Test func unknownKeysAreErrorsWhenStrictAndWarningsAtStartUp() throws {
        let text = Self.minimal.replacingOccurrences(of: "\"programs\"", with: "\"grop_id\": \"x\", \"programs\"")
        #expect(throws: ConfigurationError.self) { try load(text, strict: true) }
        do {
            _ = try load(text, strict: true)
        } catch {
            #expect(error.issues.contains { $0.keyPath == "grop_id" && $0.isUnknownKey })
        }
        let (_, issues) = try load(text, strict: false)
        #expect(issues.contains { $0.keyPath == "grop_id" && $0.severity == .warning })
    }

    @Test func everyErrorNamesItsKey() {
        let text = """
        {"kafka": {"bootstrap.servers": "h:1"}, "group_id": 5,
         "scheduler": {"max_in_flight": 0, "ordering": "lifo"},
         "programs": {"p": {"issuer": "visa", "base_url": "ftp://x", "api_key_env": "K", "timeout_ms": "fast"},
                      "d": {"issuer": "dcs", "base_url": "https://d", "api_key_env": "K"}}}
        """
        do {
            _ = try WorkerConfiguration.load(json: text, environment: ["K": "v", "PROVISIONER_AUDIT_KEY": "a"], workerID: "w", strict: true)
            Issue.record("expected errors")
        } catch {
            let paths = Set(error.issues.map(\.keyPath))
            #expect(paths.isSuperset(of: ["group_id", "scheduler.max_in_flight", "scheduler.ordering", "programs.p.issuer",
                                          "programs.p.base_url", "programs.p.timeout_ms", "programs.d.api_secret_env"]))
        }
    }

    @Test func missingSecretsAreReportedByVariableNameOnly() {
        do {
            _ = try WorkerConfiguration.load(json: Self.minimal, environment: ["PROVISIONER_AUDIT_KEY": "a"], workerID: "w", strict: true)
            Issue.record("expected a missing secret")
        } catch {
            #expect(error.issues.map(\.description) == ["error: programs.acme.api_key_env: names environment variable ACME_KEY, which is not set"])
        }
    }

    @Test func environmentOverridesReachNestedKeysAndKafkaProperties() throws {
        let (configuration, issues) = try load(Self.minimal, env: [
            "PROVISIONER_GROUP_ID": "group-from-env",
            "PROVISIONER_KAFKA__BOOTSTRAP_SERVERS": "10.0.0.1:9093",
            "PROVISIONER_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
            "PROVISIONER_PROGRAMS__ACME__BASE_URL": "https://override.example",
            "PROVISIONER_PROGRAMS__ACME__TIMEOUT_MS": "2500",
            "PROVISIONER_SCHEDULER__MAX_IN_FLIGHT": "64",
            "PROVISIONER_HTTP__LISTEN": "0.0.0.0:9000",
            "PROVISIONER_NOT_A_KEY": "x",
        ])
        #expect(configuration.groupID == "group-from-env")
        #expect(configuration.kafka["bootstrap.servers"] == "10.0.0.1:9093")
        #expect(configuration.kafka["security.protocol"] == "SASL_SSL")
        #expect(configuration.program("acme")?.baseURL == "https://override.example")
        #expect(configuration.program("acme")?.timeoutMs == 2500)
        #expect(configuration.scheduler.globalLimit == 64)
        #expect(configuration.httpListen == "0.0.0.0:9000")
        #expect(issues.map(\.keyPath) == ["environment PROVISIONER_NOT_A_KEY"])
    }

    @Test func programLimitsAndRatesReachTheScheduler() throws {
        let text = """
        {"kafka": {"bootstrap.servers": "h:1"},
         "scheduler": {"max_in_flight": 100, "issuer_max_in_flight": {"imprint": 40}},
         "programs": {"acme": {"issuer": "imprint", "base_url": "https://i", "api_key_env": "ACME_KEY",
                               "max_in_flight": 10, "rate_limit": {"per_second": 50, "burst": 5}}}}
        """
        let (configuration, _) = try load(text)
        #expect(configuration.scheduler.globalLimit == 100)
        #expect(configuration.scheduler.programLimits["acme"] == 10)
        #expect(configuration.scheduler.rateLimits["acme"] == .init(perSecond: 50, burst: 5))
        #expect(configuration.scheduler.endpointLimits["imprint https://i"] == 40)
    }
}
