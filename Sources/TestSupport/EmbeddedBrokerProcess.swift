/// `provisioner broker` running as a child process: an embedded Kafka cluster on loopback with the
/// pipeline topics, reachable by other processes. Killed when the object goes away, and started with
/// `--exit-with-parent` so that even a crashed test run leaves no broker behind.
public final class EmbeddedBrokerProcess: Sendable {
    /// The child process (its output, signals, exit).
    public let process: ChildProcess
    /// The `bootstrap.servers` value the broker printed.
    public let bootstrapServers: String

    private init(process: ChildProcess, bootstrapServers: String) {
        self.process = process
        self.bootstrapServers = bootstrapServers
    }

    /// Starts `provisioner broker` and waits for its `bootstrap.servers=` line.
    public static func start(brokers: Int = 3, partitions: Int = 6, extraArguments: [String] = [],
                             timeout: Duration = .seconds(20)) async throws -> EmbeddedBrokerProcess {
        let process = try ChildProcess(
            executable: try BuiltProducts.provisionerPath,
            arguments: ["broker", "--brokers", String(brokers), "--partitions", String(partitions), "--exit-with-parent"]
                + extraArguments)
        let line = try await process.waitForLine(prefix: "bootstrap.servers=", timeout: timeout)
        let servers = String(line.dropFirst("bootstrap.servers=".count))
        guard !servers.isEmpty else {
            throw TestSupportError("provisioner broker printed an empty bootstrap.servers line")
        }
        return EmbeddedBrokerProcess(process: process, bootstrapServers: servers)
    }

    /// Stops the broker with SIGTERM and returns how it ended (expected: `.exited(0)`).
    @discardableResult
    public func stop(timeout: Duration = .seconds(10)) async throws -> ChildProcess.Termination {
        process.terminate()
        return try await process.waitForExit(timeout: timeout)
    }
}
