import Testing
import Foundation
import Contract
import Observability
@testable import Pipeline
import TestSupport

@Suite("Worker configuration", .timeLimit(.minutes(10)))
struct WorkerConfigurationTests {
    /// A pseudonym key of the shortest accepted length (32 bytes).
    static let auditKey = "audit-key-for-tests-0123456789ab"

    static let secrets = [
        "DEMO_IMPRINT_API_KEY": "k1", "DEMO_DCS_API_KEY": "k2", "DEMO_DCS_API_SECRET": "s2",
        "DEMO_GNOSIS_TOKEN": "k3", "DEMO_WORLDPAY_API_KEY": "k4", "PROVISIONER_AUDIT_KEY": Self.auditKey,
    ]

    static let minimal = """
    {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
     "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example/", "api_key_env": "ACME_KEY"}}}
    """

    func load(_ text: String, env: [String: String] = [:], strict: Bool = true) throws(ConfigurationError) -> (WorkerConfiguration, [ConfigurationIssue]) {
        try WorkerConfiguration.load(json: text, environment: ["ACME_KEY": "x", "PROVISIONER_AUDIT_KEY": Self.auditKey].merging(env) { $1 },
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
        #expect(configuration.program("demo-dcs")?.apiSecret == .environment("DEMO_DCS_API_SECRET"))
        #expect(configuration.topics.deadLetters == "provisioning.dlq")
        #expect(configuration.topics.markers == "provisioning.markers")
        #expect(configuration.consumerProperties["group.id"] == "provisioner")
        #expect(configuration.httpListen == "127.0.0.1:9464")
    }

    /// The next-generation group protocol (KIP-848) gives no classic group generation, which
    /// zombie fencing orders owners by: refused at load, whichever properties object sets it.
    @Test func nextGenerationGroupProtocolIsRefused() throws {
        for objects in [#""kafka": {"bootstrap.servers": "127.0.0.1:9092", "group.protocol": "consumer"}"#,
                        #""kafka": {"bootstrap.servers": "127.0.0.1:9092"}, "kafka_consumer": {"group.protocol": "CONSUMER"}"#] {
            let text = """
            {\(objects),
             "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example/", "api_key_env": "ACME_KEY"}}}
            """
            #expect(throws: ConfigurationError.self) { try load(text, strict: false) }
            do {
                _ = try load(text, strict: false)
            } catch {
                #expect(error.issues.contains { $0.keyPath.hasSuffix("group.protocol") && $0.message.contains("only the classic group protocol") },
                        "\(error.issues.map(\.description))")
            }
        }
        let classic = """
        {"kafka": {"bootstrap.servers": "127.0.0.1:9092", "group.protocol": "classic"},
         "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example/", "api_key_env": "ACME_KEY"}}}
        """
        #expect(try load(classic).1.isEmpty)
    }

    /// A key an earlier version read and this one replaced loads, even under `--strict`, with a
    /// warning naming what replaced it; the replacement's default applies.
    @Test func retiredDuplicateCapLoadsWithAWarning() throws {
        let text = """
        {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
         "duplicates": {"max_entries_per_partition": 2000000},
         "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example/", "api_key_env": "ACME_KEY"}}}
        """
        let (configuration, issues) = try load(text, strict: true)
        #expect(issues.map(\.keyPath) == ["duplicates.max_entries_per_partition"])
        #expect(issues.first?.severity == .warning)
        #expect(issues.first?.message.contains("duplicates.max_bytes") == true)
        #expect(configuration.duplicateIndexMaxBytes == 256 << 20)
    }

    /// A revoke lets every call in flight end and be decided by its caller: the drain is never below
    /// the longest program timeout plus the publish reserve (raised, with a warning when configured lower).
    @Test func revokeDrainCoversTheLongestCall() throws {
        let (defaulted, quiet) = try load(Self.minimal)
        #expect(defaulted.revokeDrainMs == 10_000 + 200, "default program timeout 10 s plus the 200 ms reserve")
        #expect(!quiet.contains { $0.keyPath == "rebalance.drain_timeout_ms" })
        let low = Self.minimal.replacingOccurrences(of: #""programs":"#, with: #""rebalance": {"drain_timeout_ms": 5000}, "programs":"#)
        let (raised, issues) = try load(low)
        #expect(raised.revokeDrainMs == 10_200)
        #expect(issues.contains { $0.keyPath == "rebalance.drain_timeout_ms" && $0.severity == .warning && $0.message.contains("raised to 10200") })
        let high = Self.minimal.replacingOccurrences(of: #""programs":"#, with: #""rebalance": {"drain_timeout_ms": 30000}, "programs":"#)
        #expect(try load(high).0.revokeDrainMs == 30_000, "a longer drain stays")
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
            _ = try WorkerConfiguration.load(json: text, environment: ["K": "v", "PROVISIONER_AUDIT_KEY": Self.auditKey], workerID: "w", strict: true)
            Issue.record("expected errors")
        } catch {
            let paths = Set(error.issues.map(\.keyPath))
            #expect(paths.isSuperset(of: ["group_id", "scheduler.max_in_flight", "scheduler.ordering", "programs.p.issuer",
                                          "programs.p.base_url", "programs.p.timeout_ms", "programs.d.api_secret_env"]))
        }
    }

    @Test func missingSecretsAreReportedByVariableNameOnly() {
        do {
            _ = try WorkerConfiguration.load(json: Self.minimal, environment: ["PROVISIONER_AUDIT_KEY": Self.auditKey], workerID: "w", strict: true)
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

    // MARK: - Pseudonym key length, http:// only to loopback

    @Test("a pseudonym key shorter than 32 bytes is a configuration error naming audit.pseudonym_key_env, never the key")
    func shortPseudonymKeyIsRefusedAtLoad() throws {
        // Up to 31 bytes of UTF-8 ("é" is two), each distinctive enough to find in a message.
        for short in ["Zq9", "Zq9-short-audit-key", "Zq9" + String(repeating: "k", count: 28), "éZq9" + String(repeating: "k", count: 26)] {
            do {
                _ = try load(Self.minimal, env: ["PROVISIONER_AUDIT_KEY": short])
                Issue.record("a \(short.utf8.count)-byte pseudonym key was accepted")
            } catch {
                let issue = try #require(error.issues.first { $0.keyPath == "audit.pseudonym_key_env" }, "\(error.issues)")
                #expect(issue.severity == .error)
                #expect(issue.message.contains("PROVISIONER_AUDIT_KEY") && issue.message.contains("shorter than 32 bytes"), "\(issue)")
                #expect(!error.description.contains(short) && !issue.description.contains(short), "the key was printed")
            }
        }
        for accepted in [String(repeating: "k", count: 32), "é" + String(repeating: "k", count: 30), Self.auditKey] {
            #expect(throws: Never.self) { try load(Self.minimal, env: ["PROVISIONER_AUDIT_KEY": accepted]) }
        }
        // A key variable the configuration renames is held to the same rule.
        let renamed = Self.minimal.replacingOccurrences(of: "\"programs\"", with: "\"audit\": {\"pseudonym_key_env\": \"MY_KEY\"}, \"programs\"")
        do {
            _ = try load(renamed, env: ["MY_KEY": "short"])
            Issue.record("a short MY_KEY was accepted")
        } catch {
            #expect(error.issues.contains { $0.keyPath == "audit.pseudonym_key_env" && $0.message.contains("MY_KEY") }, "\(error.issues)")
        }
    }

    @Test("a worker refuses to start with a pseudonym key shorter than 32 bytes, whatever loaded its configuration")
    func workerRefusesShortPseudonymKey() throws {
        let (configuration, _) = try load(Self.minimal)
        let short = "sixteen-byte-key"
        do {
            _ = try Worker(configuration: configuration, environment: ["ACME_KEY": "x", "PROVISIONER_AUDIT_KEY": short],
                           logger: Logger(label: "short-key", minimumLevel: .error, handler: CapturingLogHandler()))
            Issue.record("the worker started with a 16-byte pseudonym key")
        } catch let error as ConfigurationError {
            #expect(error.issues.map(\.keyPath) == ["audit.pseudonym_key_env"], "\(error.issues)")
            #expect(!error.description.contains(short))
        }
    }

    static func program(baseURL: String) -> String {
        """
        {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
         "programs": {"acme": {"issuer": "imprint", "base_url": "\(baseURL)", "api_key_env": "ACME_KEY"}}}
        """
    }

    @Test("http:// base URLs are accepted only for loopback hosts: 127.0.0.0/8, localhost, [::1]",
          arguments: ["http://127.0.0.1:8081/imprint", "http://127.1.2.3", "http://localhost:9000/", "http://LOCALHOST",
                      "http://[::1]:8081/dcs", "http://[::1]", "http://user:pass@127.0.0.1:80/x"])
    func httpToLoopbackIsAccepted(_ url: String) throws {
        let (configuration, issues) = try load(Self.program(baseURL: url))
        #expect(issues.isEmpty, "\(issues)")
        #expect(configuration.program("acme") != nil)
    }

    @Test("http:// to any other host is a configuration error at load",
          arguments: ["http://api.imprint.example", "http://10.0.0.5:8080/imprint", "http://127.0.0.1.nip.io/", "http://localhost.evil.example",
                      "http://127.0.0.1@evil.example/", "http://[::2]:80", "http://0.0.0.0:8081", "http://128.0.0.1",
                      "http://127.0.0.256", "http://127.0.0", "http://"])
    func httpToOtherHostsIsRefused(_ url: String) {
        do {
            _ = try load(Self.program(baseURL: url))
            Issue.record("\(url) was accepted")
        } catch {
            #expect(error.issues.contains { $0.keyPath == "programs.acme.base_url" && $0.message.contains("not loopback") }, "\(error.issues)")
        }
    }

    @Test("https:// base URLs are accepted for any host; other schemes are refused")
    func httpsAnywhere() throws {
        for url in ["https://api.imprint.example", "https://10.0.0.5:8443/x", "https://127.0.0.1:8443"] {
            #expect(throws: Never.self) { try load(Self.program(baseURL: url)) }
        }
        #expect(throws: ConfigurationError.self) { try load(Self.program(baseURL: "ftp://127.0.0.1")) }
    }

    /// Reply topics per program. A program's `reply_topics` replaces `results.reply_topics`
    /// for its requests, so a signing program's backends' reply topic is not open to the others.
    @Test("programs.<name>.reply_topics overrides results.reply_topics for that program only; a bad list names its key")
    func replyTopicsPerProgram() throws {
        let text = """
        {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
         "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example", "api_key_env": "ACME_KEY",
                               "reply_topics": ["acme.replies"]},
                      "globex": {"issuer": "imprint", "base_url": "https://api.imprint.example", "api_key_env": "ACME_KEY"}},
         "results": {"reply_topics": ["shared.replies.*"]}}
        """
        let (configuration, issues) = try load(text)
        #expect(issues.isEmpty, "\(issues)")
        #expect(configuration.program("acme")?.replyTopics == ["acme.replies"])
        #expect(configuration.program("globex")?.replyTopics == nil)
        let routing = ReplyRouting(configuration: configuration)
        #expect(routing.allows("acme.replies", program: "acme") && !routing.allows("shared.replies.a", program: "acme"))
        #expect(routing.allows("shared.replies.a", program: "globex") && !routing.allows("acme.replies", program: "globex"))
        #expect(!routing.allows("acme.replies", program: nil) && routing.allows("shared.replies.a", program: nil))
        #expect(routing.allows(configuration.topics.results, program: "acme"), "the default results topic is always allowed")
        let refused = routing.check(.success(ReplyRoute(topic: "shared.replies.a", partition: 0, correlationID: [1])), program: "acme")
        #expect(refused.route == ReplyRoute(topic: nil, correlationID: [1]))
        #expect(refused.refusal?.contains("the program's reply_topics") == true)
        #expect(routing.recheck(ReplyRoute(topic: "acme.replies", partition: 2), program: "globex") == nil,
                "a reconciliation job's route is checked against its program's list")
        for bad in [#""acme.replies""#, #"["bad topic"]"#, #"[7]"#, #"["*"]"#] {
            let broken = text.replacingOccurrences(of: #"["acme.replies"]"#, with: bad)
            do {
                _ = try load(broken)
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.issues.contains { $0.keyPath == "programs.acme.reply_topics" }, "\(error.issues)")
            }
        }
    }

    /// `request_signing` accepts v3 only unless `accept_v2` / `accept_v1` say otherwise.
    @Test("request_signing: v3 only by default; accept_v2 and accept_v1 opt in")
    func signatureVersionsAcceptedByProgram() throws {
        func program(_ signing: String) throws -> ProgramConfiguration? {
            let text = """
            {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
             "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example", "api_key_env": "ACME_KEY",
                                   "request_signing": \(signing)}}}
            """
            return try load(text, env: ["ACME_SIGNING": "acme-signing-key-0123456789abcdef0123"]).0.program("acme")
        }
        let plain = try program(#"{"secret_env": "ACME_SIGNING"}"#)
        #expect(plain?.requestSigningAcceptsV2 == false && plain?.requestSigningAcceptsV1 == false)
        let migrating = try program(#"{"secret_env": "ACME_SIGNING", "accept_v2": true, "accept_v1": true}"#)
        #expect(migrating?.requestSigningAcceptsV2 == true && migrating?.requestSigningAcceptsV1 == true)
    }

    /// `request_signing.keys`: named keys with an overlap window; ids checked, every key's secret
    /// checked like the unnamed one's; `signingKeyRetirements` (what `config check` prints) warns
    /// about keys retired or retiring within 7 days.
    @Test("request_signing.keys: named keys with not_after; bad entries named by key path; retirements reported")
    func namedSigningKeys() throws {
        func text(_ keys: String) -> String {
            """
            {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
             "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example", "api_key_env": "ACME_KEY",
                                   "request_signing": {"keys": \(keys)}}}}
            """
        }
        let env = ["OLD": "acme-old-signing-key-0123456789abcdef", "NEW": "acme-new-signing-key-0123456789abcdef"]
        let good = text(#"[{"id": "2026-11", "secret_env": "OLD", "not_after": "2026-12-10T00:00:00Z"}, {"id": "2026-12", "secret_env": "NEW"}]"#)
        let program = try #require(try load(good, env: env).0.program("acme"))
        #expect(program.signsRequests && program.requestSigningSecret == nil)
        #expect(program.signingKeys.map(\.id) == ["2026-11", "2026-12"])
        #expect(program.signingKeys.map(\.notAfterMs) == [RFC3339.parse("2026-12-10T00:00:00Z"), nil])
        #expect(program.signingKeys.map(\.keyPath) == ["programs.acme.request_signing.keys[0].secret_env", "programs.acme.request_signing.keys[1].secret_env"])

        let bad: [(String, [String: String], String, String)] = [
            (#"[]"#, env, "programs.acme.request_signing.keys", "non-empty array"),
            (#"[{"id": "a b", "secret_env": "NEW"}]"#, env, "programs.acme.request_signing.keys[0].id", "1 to 64"),
            (#"[{"id": "k", "secret_env": "OLD"}, {"id": "k", "secret_env": "NEW"}]"#, env, "programs.acme.request_signing.keys[1].id", "repeats key id 'k'"),
            (#"[{"id": "k", "secret_env": "NEW", "not_after": "next week"}]"#, env, "programs.acme.request_signing.keys[0].not_after", "RFC 3339"),
            (#"[{"id": "k"}]"#, env, "programs.acme.request_signing.keys[0].secret_env", "is required"),
            (#"[{"id": "k", "secret_env": "NEW", "extra": 1}]"#, env, "programs.acme.request_signing.keys[0].extra", "not a known key"),
            (#"[{"id": "k", "secret_env": "SHORT"}]"#, ["SHORT": "too-short"], "programs.acme.request_signing.keys[0].secret_env", "shorter than 32 bytes"),
            (#"[{"id": "k", "secret_env": "UNSET"}]"#, env, "programs.acme.request_signing.keys[0].secret_env", "not set"),
        ]
        for (keys, environment, keyPath, words) in bad {
            do {
                _ = try load(text(keys), env: environment)
                Issue.record("accepted \(keys)")
            } catch {
                #expect(error.issues.contains { $0.keyPath == keyPath && $0.message.contains(words) }, "\(keys): \(error.issues)")
                #expect(!error.description.contains("too-short"))
            }
        }

        let configuration = try load(good, env: env).0
        let notAfter = try #require(RFC3339.parse("2026-12-10T00:00:00Z"))
        #expect(configuration.signingKeyRetirements(nowMs: notAfter - 8 * 86_400_000).isEmpty)
        let soon = configuration.signingKeyRetirements(nowMs: notAfter - 36 * 3_600_000)
        #expect(soon.map(\.keyPath) == ["programs.acme.request_signing.keys[0].secret_env"]
                && soon.first?.message.contains("key '2026-11' retires at 2026-12-10T00:00:00") == true
                && soon.first?.message.contains("(in 36 h)") == true, "\(soon)")
        let past = configuration.signingKeyRetirements(nowMs: notAfter)
        #expect(past.count == 1 && past.first?.message.contains("retired at") == true, "\(past)")
        let onlyOld = try load(text(#"[{"id": "2026-11", "secret_env": "OLD", "not_after": "2026-12-10T00:00:00Z"}]"#), env: env).0
        #expect(onlyOld.signingKeyRetirements(nowMs: notAfter).map(\.keyPath).contains("programs.acme.request_signing"))
    }

    /// Signing keys are at least 32 bytes, and the replay key is none of the
    /// programs' signing secrets; problems name the variable, never the value (at load, and in the
    /// worker however it got its configuration).
    @Test("short signing or replay keys, and a replay key equal to a program's secret, are refused at load and by the worker, by name only")
    func signingKeysAreLongAndApart() throws {
        let text = """
        {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
         "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example", "api_key_env": "ACME_KEY",
                               "request_signing": {"secret_env": "ACME_SIGNING"}}},
         "dlq": {"replay_signing_secret_env": "REPLAY_KEY"}}
        """
        let long = "acme-signing-key-0123456789abcdef0123"
        let replay = "replay-key-0123456789abcdef0123456789"
        #expect(throws: Never.self) { try load(text, env: ["ACME_SIGNING": long, "REPLAY_KEY": replay]) }
        let short = "sixteen-byte-key"
        let cases: [([String: String], [String], String)] = [
            (["ACME_SIGNING": short, "REPLAY_KEY": replay], ["programs.acme.request_signing.secret_env"], "shorter than 32 bytes"),
            (["ACME_SIGNING": long, "REPLAY_KEY": short], ["dlq.replay_signing_secret_env"], "shorter than 32 bytes"),
            (["ACME_SIGNING": long, "REPLAY_KEY": long], ["dlq.replay_signing_secret_env"], "must differ from every program's signing secret"),
        ]
        for (env, keyPaths, words) in cases {
            do {
                _ = try load(text, env: env)
                Issue.record("accepted \(keyPaths)")
            } catch {
                #expect(error.issues.map(\.keyPath) == keyPaths && error.issues.allSatisfy { $0.message.contains(words) }, "\(error.issues)")
                #expect(!error.description.contains(short) && !error.description.contains(long))
            }
            // The worker refuses them too, whatever loaded its configuration.
            let (configuration, _) = try load(text, env: ["ACME_SIGNING": long, "REPLAY_KEY": replay])
            do {
                _ = try Worker(configuration: configuration, environment: ["ACME_KEY": "x", "PROVISIONER_AUDIT_KEY": Self.auditKey].merging(env) { $1 },
                               logger: Logger(label: "keys", minimumLevel: .error, handler: CapturingLogHandler()))
                Issue.record("the worker started with \(keyPaths)")
            } catch let error as ConfigurationError {
                #expect(error.issues.map(\.keyPath) == keyPaths, "\(error.issues)")
            }
        }
    }

    @Test("two programs may not share a signing key, by source or by value: refused at load, naming both keys and no value")
    func programsDoNotShareSigningKeys() throws {
        func text(_ second: String) -> String {
            """
            {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
             "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example", "api_key_env": "ACME_KEY",
                                   "request_signing": {"secret_env": "ACME_SIGNING"}},
                          "beta": {"issuer": "dcs", "base_url": "https://api.dcs.example", "api_key_env": "BETA_KEY", "api_secret_env": "BETA_SECRET",
                                   "request_signing": {"keys": [{"id": "k1", "secret_env": "\(second)"}]}}}}
            """
        }
        let acme = "acme-signing-key-0123456789abcdef0123"
        let beta = "beta-signing-key-0123456789abcdef0123"
        let keys = ["BETA_KEY": "x", "BETA_SECRET": "y"]
        #expect(throws: Never.self) { try load(text("BETA_SIGNING"), env: keys.merging(["ACME_SIGNING": acme, "BETA_SIGNING": beta]) { $1 }) }
        for (variable, env) in [("ACME_SIGNING", ["ACME_SIGNING": acme]), ("BETA_SIGNING", ["ACME_SIGNING": acme, "BETA_SIGNING": acme])] {
            do {
                _ = try load(text(variable), env: keys.merging(env) { $1 })
                Issue.record("two programs shared a signing key through \(variable)")
            } catch {
                let errors = error.issues.filter { $0.severity == .error }
                #expect(errors.map(\.keyPath) == ["programs.beta.request_signing.keys[0].secret_env"]
                        && errors.allSatisfy { $0.message.contains("programs.acme.request_signing.secret_env") && $0.message.contains("may not share") },
                        "\(error.issues.map(\.description))")
                #expect(!error.description.contains(acme))
            }
        }
    }
}
