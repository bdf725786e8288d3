import Contract
@testable import Pipeline
import Testing

/// `tracing.*`: off without an endpoint, read from the file or `PROVISIONER_TRACING__…`, checked.
@Suite("Worker configuration: tracing", .timeLimit(.minutes(2)))
struct TracingConfigurationTests {
    static let minimal = """
    {"kafka": {"bootstrap.servers": "127.0.0.1:9092"},
     "programs": {"acme": {"issuer": "imprint", "base_url": "https://api.imprint.example/", "api_key_env": "ACME_KEY"}}%@}
    """

    func load(_ tracing: String = "", env: [String: String] = [:]) throws(ConfigurationError) -> WorkerConfiguration {
        let text = Self.minimal.replacingOccurrences(of: "%@", with: tracing.isEmpty ? "" : ", \"tracing\": \(tracing)")
        return try WorkerConfiguration.load(json: text, environment: ["ACME_KEY": "x", "PROVISIONER_AUDIT_KEY": WorkerConfigurationTests.auditKey]
                                                .merging(env) { $1 }, workerID: "w1", strict: true).0
    }

    @Test func offWithoutAnEndpoint() throws {
        #expect(try load().tracing == nil)
        #expect(try load(#"{"sample_ratio": 0.5, "max_queue": 10}"#).tracing == nil)
    }

    @Test func readFromTheFileWithDefaults() throws {
        let tracing = try #require(try load(#"{"otlp_endpoint": "http://otel:4318"}"#).tracing)
        #expect(tracing == { var expected = WorkerConfiguration.TracingSettings(endpoint: "http://otel:4318"); expected.sampleRatio = 1; expected.maxQueue = 10_000; return expected }())
        let tuned = try #require(try load(#"{"otlp_endpoint": "https://otel:4318", "sample_ratio": 0.25, "max_queue": 50}"#).tracing)
        #expect(tuned.sampleRatio == 0.25 && tuned.maxQueue == 50)
    }

    @Test func environmentOverridesTurnItOn() throws {
        let tracing = try #require(try load(env: ["PROVISIONER_TRACING__OTLP_ENDPOINT": "http://otel:4318", "PROVISIONER_TRACING__SAMPLE_RATIO": "0.1"]).tracing)
        #expect(tracing.endpoint == "http://otel:4318" && tracing.sampleRatio == 0.1)
    }

    @Test func badValuesAreErrorsNamingTheKey() {
        for (tracing, key) in [(#"{"otlp_endpoint": "otel:4318"}"#, "tracing.otlp_endpoint"),
                               (#"{"otlp_endpoint": "http://otel:4318", "sample_ratio": 1.5}"#, "tracing.sample_ratio"),
                               (#"{"otlp_endpoint": "http://otel:4318", "max_queue": 0}"#, "tracing.max_queue"),
                               (#"{"otlp_endpoint": "http://otel:4318", "exporter": "grpc"}"#, "tracing.exporter")] {
            do {
                _ = try load(tracing)
                Issue.record("\(tracing) was accepted")
            } catch {
                #expect(error.issues.contains { $0.severity == .error && $0.keyPath == key }, "\(tracing): \(error.issues.map(\.keyPath))")
            }
        }
    }
}
