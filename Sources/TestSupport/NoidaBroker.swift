import Foundation
import Kafka

/// noida-db's Kafka service (PyPI `noida-db`, installed into `.venv` by `scripts/setup`) as a child
/// process: a single-node Kafka-compatible broker that is not librdkafka's mock cluster. The binary
/// itself is started (not the Python wrapper), so the child's pid is the broker's; it exits on
/// SIGTERM. Like Apache Kafka it answers CreateTopics, DescribeConfigs and AlterConfigs, and refuses
/// `session.timeout.ms` below 6,000 (`group.min.session.timeout.ms`); unlike the mock it answers an
/// idle fetch at once (about 0.4 core per idle consumer), so tests close consumers promptly.
public final class NoidaBroker: Sendable {
    /// The broker process.
    public let process: ChildProcess
    /// `127.0.0.1:PORT`.
    public let bootstrapServers: String
    /// Its data folder (removed by `stop`).
    public let dataDirectory: String

    /// The smallest `session.timeout.ms` it accepts (as Apache Kafka's default `group.min.session.timeout.ms`).
    public static let minimumSessionTimeoutMs = 6_000

    private init(process: ChildProcess, bootstrapServers: String, dataDirectory: String) {
        self.process = process
        self.bootstrapServers = bootstrapServers
        self.dataDirectory = dataDirectory
    }

    /// The `noida-db` executable: `$NOIDA_DB_BINARY` when set, else the one `scripts/setup` put in
    /// the repository's `.venv` (found from the running test binary's folder upwards).
    public static var executablePath: String {
        get throws(TestSupportError) {
            if let override = ProcessInfo.processInfo.environment["NOIDA_DB_BINARY"], !override.isEmpty {
                guard FileManager.default.isExecutableFile(atPath: override) else {
                    throw TestSupportError("NOIDA_DB_BINARY is set to '\(override)', which is not an executable file")
                }
                return override
            }
            var folder = URL(fileURLWithPath: BuiltProducts.directory)
            for _ in 0..<6 {
                let lib = folder.appendingPathComponent(".venv/lib")
                let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path))?.filter { $0.hasPrefix("python3") } ?? []
                for version in versions.sorted() {
                    let path = lib.appendingPathComponent("\(version)/site-packages/noida_db/noida-db").path
                    if FileManager.default.isExecutableFile(atPath: path) { return path }
                }
                folder.deleteLastPathComponent()
            }
            throw TestSupportError("noida-db was not found in the repository's .venv; run scripts/setup (it installs PyPI noida-db there)")
        }
    }

    /// Starts `noida-db start --only kafka` on a free loopback port with a fresh data folder and
    /// waits until it answers Metadata.
    public static func start(timeout: Duration = .seconds(30)) async throws -> NoidaBroker {
        let port = try FreePort.pick()
        let data = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("noida-db")).path
        let process = try ChildProcess(executable: try executablePath,
                                       arguments: ["start", "--only", "kafka", "--kafka-port", String(port), "--data-dir", data])
        let broker = NoidaBroker(process: process, bootstrapServers: "127.0.0.1:\(port)", dataDirectory: data)
        do {
            try await process.waitForLine(prefix: "press Ctrl-C to stop", timeout: timeout)
            let admin = try KafkaAdmin(configuration: ["bootstrap.servers": broker.bootstrapServers])
            defer { admin.close() }
            _ = try admin.listTopics(timeoutMs: 10_000)
        } catch {
            process.kill()
            try? FileManager.default.removeItem(atPath: data)
            throw error
        }
        return broker
    }

    /// Creates `names` with `partitions` partitions each (replication factor 1: one node) through
    /// CreateTopics; throws naming the first topic the broker refused.
    public func createTopics(_ names: [String], partitions: Int, timeoutMs: Int32 = 15_000) throws {
        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": bootstrapServers])
        defer { admin.close() }
        let outcomes = try admin.createTopics(names.map { KafkaTopicSpecification(name: $0, partitions: partitions, replicationFactor: 1) },
                                              timeoutMs: timeoutMs)
        for name in names {
            if let failure = outcomes[name] ?? nil {
                throw TestSupportError("noida-db refused to create \(name): \(failure)")
            }
        }
    }

    /// Stops the broker with SIGTERM (SIGKILL if it has not exited after `timeout`) and removes its
    /// data folder; returns how it ended.
    @discardableResult
    public func stop(timeout: Duration = .seconds(10)) async -> ChildProcess.Termination? {
        process.terminate()
        let termination = try? await process.waitForExit(timeout: timeout)
        if termination == nil { process.kill() }
        try? FileManager.default.removeItem(atPath: dataDirectory)
        return termination
    }

    /// Stops it without waiting (for `defer` in synchronous code): SIGKILL, data folder removed.
    public func kill() {
        process.kill()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}
