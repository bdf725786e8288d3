import Contract
import Foundation
import Harness
import HTTP
import Observability
import Pipeline

/// The benchmark's processes: `provisioner broker`, `provisioner simulator` and workers, each its
/// own child, so the worker's CPU, memory and threads are measured alone. The bench process
/// itself only produces requests and reads results. `provisioner` is the binary built next to
/// `provisioner-bench` (`swift build --product provisioner`).
final class BenchStack: @unchecked Sendable {
    let broker: ChildProcess
    let simulator: ChildProcess
    private(set) var workers: [ChildProcess] = []
    private(set) var workerMetricsPorts: [UInt16] = []
    let bootstrapServers: String
    let simulatorURL: String
    let partitions: Int
    let directory: String
    let topics = TopicNames()
    private let executable: String
    private let http = HTTPClient()

    /// Starts the broker (one mock broker, `partitions` per topic) and the simulator with `profile`.
    /// `extraTopics`: more topics to create (name → partitions), such as a reply topic.
    init(partitions: Int, profile: JSONValue, extraTopics: [String: Int] = [:]) throws {
        executable = try Self.provisionerExecutable()
        directory = NSTemporaryDirectory() + "provisioner-bench-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.partitions = partitions
        broker = try ChildProcess(executable: executable,
                                  arguments: ["broker", "--brokers", "1", "--partitions", String(partitions), "--exit-with-parent"]
                                      + (extraTopics.isEmpty ? [] : ["--topics", extraTopics.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")]))
        let bootstrapLine = try Self.waitForLine(broker, prefix: "bootstrap.servers=", stream: .standardOutput, timeoutMs: 20_000)
        bootstrapServers = String(bootstrapLine.dropFirst("bootstrap.servers=".count))
        let profilePath = directory + "/profile.json"
        try Data(JSONWriter.encode(profile)).write(to: URL(fileURLWithPath: profilePath))
        simulator = try ChildProcess(executable: executable, arguments: ["simulator", "--listen", "127.0.0.1:0", "--profile", profilePath,
                                                                                "--exit-with-parent"])
        let listening = try Self.waitForLine(simulator, prefix: "simulator listening on ", stream: .standardOutput, timeoutMs: 20_000)
        simulatorURL = String(listening.dropFirst("simulator listening on ".count))
    }

    /// Starts a worker with the demo programs pointed at this stack; `adjust` edits its
    /// configuration document; `wrapper` runs it under another program (`valgrind --tool=callgrind
    /// ...`, the same process id). Returns once it is ready (`/readyz`), waiting up to `readyTimeoutMs`.
    @discardableResult
    func startWorker(groupID: String, wrapper: [String] = [], readyTimeoutMs: Int64 = 30_000,
                     adjust: (inout [String: JSONValue]) -> Void = { _ in }) throws -> ChildProcess {
        var document = try JSONParser().parse(DemoConfiguration.json).objectValue ?? [:]
        document["kafka"] = .object(["bootstrap.servers": .string(bootstrapServers)])
        document["group_id"] = .string(groupID)
        var programs = document["programs"]?.objectValue ?? [:]
        for (name, value) in programs {
            var program = value.objectValue ?? [:]
            program["base_url"] = .string("\(simulatorURL)/\(name.replacingOccurrences(of: "demo-", with: ""))")
            programs[name] = .object(program)
        }
        document["programs"] = .object(programs)
        let port = try FreePort.pick()
        document["http"] = .object(["listen": .string("127.0.0.1:\(port)")])
        document["log"] = .object(["level": .string("warning")])
        adjust(&document)
        let path = directory + "/worker-\(workers.count + 1).json"
        try Data(JSONWriter.encode(.object(document))).write(to: URL(fileURLWithPath: path))
        var environment = DemoConfiguration.secrets
        environment["PROVISIONER_AUDIT_KEY"] = Crypto.hex(Crypto.randomBytes(32))
        let workerArguments = ["worker", "--config", path, "--exit-with-parent"]
        // PROVISIONER_BENCH_WORKER names another build's binary for the worker (before/after runs
        // with the same load generator, broker and simulator).
        let workerExecutable = ProcessInfo.processInfo.environment["PROVISIONER_BENCH_WORKER"] ?? executable
        let worker = try wrapper.isEmpty
            ? ChildProcess(executable: workerExecutable, arguments: workerArguments, environment: environment)
            : ChildProcess(executable: wrapper[0], arguments: Array(wrapper.dropFirst()) + [workerExecutable] + workerArguments,
                           environment: environment)
        workers.append(worker)
        workerMetricsPorts.append(port)
        let deadline = Timestamps.nowMs() + readyTimeoutMs
        while Timestamps.nowMs() < deadline {
            if case .success(let response) = http.executeBlocking(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)/readyz", timeoutMs: 500)),
               response.status == 200 {
                return worker
            }
            if worker.termination != nil {
                throw BenchmarkError("the worker exited: \(worker.standardErrorLines.suffix(5).joined(separator: " | "))")
            }
            usleep(100_000)
        }
        throw BenchmarkError("the worker was not ready within \(readyTimeoutMs / 1000) s: \(worker.standardErrorLines.suffix(5).joined(separator: " | "))")
    }

    /// Replaces the simulator's load profile (`POST /_sim/profile`).
    func replaceProfile(_ profile: JSONValue) throws {
        let request = HTTPClientRequest(method: "POST", url: "\(simulatorURL)/_sim/profile",
                                        headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
                                        body: JSONWriter.encode(profile), timeoutMs: 5_000)
        guard case .success(let response) = http.executeBlocking(request), response.status == 200 else {
            throw BenchmarkError("the simulator did not accept the profile")
        }
    }

    /// A worker's Prometheus text (`/metrics`).
    func metrics(worker index: Int = 0) -> String {
        guard index < workerMetricsPorts.count,
              case .success(let response) = http.executeBlocking(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(workerMetricsPorts[index])/metrics", timeoutMs: 2_000))
        else { return "" }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Sum of a metric family's samples in a worker's `/metrics` (labels ignored).
    func metricTotal(_ name: String, worker index: Int = 0) -> Double {
        metrics(worker: index).split(separator: "\n").reduce(0) { total, line in
            guard line.hasPrefix(name + " ") || line.hasPrefix(name + "{") else { return total }
            return total + (Double(line.split(separator: " ").last ?? "") ?? 0)
        }
    }

    /// Stops the workers (SIGTERM, drained), then the simulator and the broker.
    func stop() {
        for worker in workers { worker.terminate() }
        for worker in workers { _ = Self.waitForExit(worker, timeoutMs: 30_000) }
        simulator.terminate()
        broker.terminate()
        _ = Self.waitForExit(simulator, timeoutMs: 10_000)
        _ = Self.waitForExit(broker, timeoutMs: 10_000)
        http.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The `provisioner` executable in this executable's directory; throws, saying how to build
    /// it, when it is missing.
    static func provisionerExecutable() throws(BenchmarkError) -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let path = ((own as NSString).deletingLastPathComponent as NSString).appendingPathComponent("provisioner")
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchmarkError("\(path) is not an executable file: the benchmarks start the provisioner built next to "
                                 + "provisioner-bench (swift build --product provisioner, with the same -c)")
        }
        return path
    }

    static func waitForLine(_ child: ChildProcess, prefix: String, stream: ChildProcess.Stream, timeoutMs: Int64) throws -> String {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            let lines = stream == .standardOutput ? child.standardOutputLines : child.standardErrorLines
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            if child.termination != nil { break }
            usleep(20_000)
        }
        throw BenchmarkError("\(child.executable) \(child.arguments.first ?? "") wrote no line starting with '\(prefix)': \(child.standardErrorLines.suffix(5).joined(separator: " | "))")
    }

    @discardableResult
    static func waitForExit(_ child: ChildProcess, timeoutMs: Int64) -> Bool {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            if child.termination != nil { return true }
            usleep(20_000)
        }
        child.kill()
        return false
    }
}
