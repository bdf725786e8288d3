import Console
import Foundation
import Testing

/// `docs/CONFIGURATION.md` and `Deploy/README.md` against the code they describe.
@Suite("docs: configuration keys and metric names come from the code", .timeLimit(.minutes(5)))
struct DocumentationTests {
    /// Key names the loader reads: the quoted first argument of every reader call in
    /// WorkerConfiguration+Loading.swift, ProgramConfiguration+Loading.swift and
    /// RequestSigningKey.swift (`string("group_id", …)`,
    /// `object("topics")`, …), the secrets and key lists it reads by name, and the breaker keys it
    /// reads in a loop.
    private static func loaderKeys() throws -> Set<String> {
        let source = try ["WorkerConfiguration+Loading.swift", "ProgramConfiguration+Loading.swift", "RequestSigningKey.swift"]
            .map { try Repository.text("Sources/Pipeline/Configuration/" + $0) }.joined(separator: "\n")
        let pattern = try NSRegularExpression(pattern: #"\b(?:string|requiredString|int|integer|double|bool|object|raw)\("([a-z_0-9]+)""#)
        var keys = Set(pattern.matches(in: source, range: NSRange(source.startIndex..., in: source)).compactMap { match in
            Range(match.range(at: 1), in: source).map { String(source[$0]) }
        })
        // A secret is read as `<name>_env` or `<name>_file` (`secretSource(&reader, "api_key", …)`).
        let secrets = try NSRegularExpression(pattern: #"secretSource\(&[a-z]+, "([a-z_]+)""#)
        for match in secrets.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            if let range = Range(match.range(at: 1), in: source) { keys.formUnion([source[range] + "_env", source[range] + "_file"]) }
        }
        // A list of rotating keys is read by name (`signingKeys(&dlq, "replay_keys")`).
        let keyLists = try NSRegularExpression(pattern: #"signingKeys\(&[a-z]+, "([a-z_]+)""#)
        for match in keyLists.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            if let range = Range(match.range(at: 1), in: source) { keys.insert(String(source[range])) }
        }
        let properties = try NSRegularExpression(pattern: #"properties\(&root, "([a-z_]+)""#)
        for match in properties.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            if let range = Range(match.range(at: 1), in: source) { keys.insert(String(source[range])) }
        }
        // The `console` section, read by ConsoleConfiguration (`provisioner console`).
        keys.formUnion(ConsoleConfiguration.keys.union(ConsoleConfiguration.tokenKeys))
        return keys
    }

    /// The key cells of CONFIGURATION.md's tables: `| \`a.b.c\` |` → `a.b.c`.
    private static func documentedKeyPaths() throws -> [String] {
        try Repository.text("docs/CONFIGURATION.md").split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `") else { return nil }
            let cell = line.dropFirst(3)
            guard let end = cell.firstIndex(of: "`") else { return nil }
            return String(cell[..<end])
        }
    }

    @Test("every key the loader reads has a row in docs/CONFIGURATION.md")
    func everyKeyDocumented() throws {
        let keys = try Self.loaderKeys()
        #expect(keys.count > 50, "the loader's reader calls were found (\(keys.count))")
        let documented = try Self.documentedKeyPaths()
        let leaves = Set(documented.flatMap { path in path.split(separator: ".").map { String($0).replacingOccurrences(of: "\"", with: "") } })
        for key in keys.sorted() {
            #expect(leaves.contains(key), "docs/CONFIGURATION.md has no row for '\(key)'")
        }
    }

    @Test("every key row in docs/CONFIGURATION.md names keys the loader reads (no invented keys)")
    func noInventedKeys() throws {
        let keys = try Self.loaderKeys()
        let roles = Set(["requests", "results", "audit", "reconcile", "dlq", "dlq_parked", "markers"])
        for path in try Self.documentedKeyPaths() where !path.hasPrefix("Config/") && !path.contains("/") {
            let parts = path.split(separator: ".").map(String.init)
            for part in parts where !part.hasPrefix("<") && !part.hasPrefix("\"") && !part.hasSuffix("\"") {
                #expect(keys.contains(part) || roles.contains(part) || ["imprint", "dcs", "gnosis", "worldpay"].contains(part),
                        "'\(part)' of '\(path)' is not a key the loader reads")
            }
        }
    }

    @Test("every metric Deploy/README.md names is registered by the worker")
    func metricNamesExist() throws {
        let registered = try ["Sources/Pipeline/Runtime/WorkerMetrics.swift", "Sources/Pipeline/Runtime/WorkerGauges.swift",
                              "Sources/Pipeline/Runtime/KafkaStatisticsMetrics.swift", "Sources/Pipeline/Markers/MarkerMetrics.swift",
                              "Sources/Pipeline/Secrets/SecretResolver.swift",
                              "Sources/Observability/Tracing/SpanExporter.swift"]
            .map(Repository.text).joined()
        let readme = try Repository.text("Deploy/README.md")
        let pattern = try NSRegularExpression(pattern: #"provisioner_[a-z0-9_]+"#)
        let names = Set(pattern.matches(in: readme, range: NSRange(readme.startIndex..., in: readme)).compactMap { match in
            Range(match.range, in: readme).map { String(readme[$0]) }
        })
        #expect(names.count >= 15)
        for name in names.sorted() {
            var base = name
            for suffix in ["_bucket", "_sum", "_count"] where base.hasSuffix(suffix) && !registered.contains("\"\(base)\"") {
                base = String(base.dropLast(suffix.count))
            }
            #expect(registered.contains("\"\(base)\""), "\(name) in Deploy/README.md is not a metric the worker registers")
        }
        for required in ["provisioner_deadline_misses_total", "provisioner_dead_letters_total", "provisioner_reconcile_backlog",
                         "provisioner_breaker_state", "provisioner_audit_publish_failures_total"] {
            #expect(names.contains(required), "Deploy/README.md alerts on \(required)")
        }
    }

    @Test("the docs say what the mock cluster cannot do for 'topics apply'")
    func mockLimitDocumented() throws {
        for file in ["docs/CONFIGURATION.md", "Deploy/README.md"] {
            let text = try Repository.text(file).split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.contains("topics apply"), "\(file)")
        }
        let configuration = try Repository.text("docs/CONFIGURATION.md").split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(configuration.contains("CreateTopics, CreatePartitions, DescribeConfigs and AlterConfigs are not answered"))
    }
}
