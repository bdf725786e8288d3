import Contract
import Foundation
import Kafka
import Pipeline
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// `provisioner broker`, run as a child process.
@Suite("provisioner broker", .timeLimit(.minutes(5)))
struct BrokerCommandTests {
    @Test("prints bootstrap.servers first, writes the bootstrap file, creates the pipeline topics, exits 0 on SIGINT")
    func runsAndStops() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("bootstrap")).path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let process = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                       arguments: ["broker", "--brokers", "2", "--partitions", "3", "--bootstrap-file", file])
        let line = try await process.waitForLine(prefix: "bootstrap.servers=")
        #expect(process.standardOutputLines.first == line, "the first stdout line")
        let servers = String(line.dropFirst("bootstrap.servers=".count))
        #expect(servers.split(separator: ",").count == 2)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == servers + "\n")

        let admin = try KafkaAdmin(configuration: ["bootstrap.servers": servers])
        defer { admin.close() }
        let topics = try admin.listTopics(timeoutMs: 5_000)
        for name in TopicNames().all {
            #expect(topics.first { $0.name == name } == KafkaTopicMetadata(name: name, partitions: 3, replicationFactor: 2))
        }
        #expect(TopicNames().all.contains("provisioning.markers"))

        process.interrupt()
        #expect(try await process.waitForExit() == .exited(0))
    }

    @Test("bad arguments end with a one-line reason and a non-zero status", arguments: [
        ["broker", "--brokers", "0"],
        ["broker", "--partitions", "many"],
        ["broker", "--no-such-option", "1"],
        ["broker", "stray"],
        ["broker", "--bootstrap-file"],
    ])
    func badArguments(_ arguments: [String]) async throws {
        let process = try ChildProcess(executable: try BuiltProducts.provisionerPath, arguments: arguments)
        let termination = try await process.waitForExit()
        #expect(termination != .exited(0))
        if case .exited(let status) = termination { #expect(status != 0) } else { Issue.record("ended by \(termination)") }
        _ = try await process.waitForLine(prefix: "provisioner broker:", in: .standardError)
        #expect(process.standardErrorLines.count == 1, "\(process.standardErrorLines)")
        #expect(process.standardOutputLines.isEmpty)
    }

    @Test("with --exit-with-parent the broker stops when the process that started it dies")
    func exitsWithParent() async throws {
        let binary = try BuiltProducts.provisionerPath
        let shell = try ChildProcess(executable: "/bin/sh", arguments: [
            "-c", "'\(binary)' broker --brokers 1 --exit-with-parent 2>/dev/null & echo broker=$!; exec sleep 30",
        ])
        let line = try await shell.waitForLine(prefix: "broker=")
        let brokerPID = try #require(pid_t(line.dropFirst("broker=".count)))
        try await shell.waitForLine(prefix: "bootstrap.servers=")  // the broker is up and watching its parent
        #expect(kill(brokerPID, 0) == 0)
        shell.send(SIGKILL)  // the parent dies without a chance to clean up
        #expect(try await shell.waitForExit() == .signaled(SIGKILL))
        #expect(try await Self.waitUntilEnded(brokerPID),
                "the orphaned broker exited: \((try? String(contentsOfFile: "/proc/\(brokerPID)/stat", encoding: .utf8)) ?? "gone")")
    }

    /// True once `pid` is gone or a zombie (it exited; its new parent may not have reaped it yet).
    static func waitUntilEnded(_ pid: pid_t, timeout: Duration = .seconds(10)) async throws -> Bool {
        try await Eventually.holds(within: timeout, every: .milliseconds(20)) {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            guard let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(close, offsetBy: 2)] == "Z"
        }
    }

    @Test("--help describes the options and exits 0")
    func help() async throws {
        let process = try ChildProcess(executable: try BuiltProducts.provisionerPath, arguments: ["broker", "--help"])
        #expect(try await process.waitForExit() == .exited(0))
        let text = process.standardOutputLines.joined(separator: "\n")
        #expect(text.hasPrefix("usage: provisioner broker"))
        for option in ["--brokers", "--partitions", "--bootstrap-file", "--exit-with-parent"] {
            #expect(text.contains(option))
        }
    }
}
