import Contract
import ProvisionerCLI

/// The `provisioner-bench` entry point: `provisioner-bench <scenario> [--json] [scenario options]`
/// runs one benchmark scenario from `scenarios` and prints its figures. The scenarios start the
/// `provisioner` built next to this executable (broker, simulator, worker) as child processes.
public enum BenchCommandLine {
    /// The options that take no value.
    static let switchNames: Set<String> = ["json", "help"]

    /// One runnable scenario. `run` reads its own options (then calls `rejectUnknown`) and returns
    /// the report to print, or nil when it printed for itself (a child-process role).
    struct Scenario: Sendable {
        let name: String
        let summary: String
        let options: String
        let run: @Sendable (inout CommandArguments) throws -> BenchmarkReport?
    }

    /// Every scenario: add a row to add one.
    static let scenarios: [Scenario] = [
        Scenario(
            name: "throughput", summary: "zero-latency simulator, rising open-loop rates until the worker saturates; bare HTTP loop for the ratio",
            options: "[--rates 500,1000,2000,...] [--seconds 5] [--partitions 6] [--max-in-flight 1024] [--linger-ms 2]",
            run: measured(ThroughputBenchmark.run)),
        Scenario(
            name: "latency", summary: "fixed rate against a fixed-latency simulator: end-to-end and overhead percentiles",
            options: "[--rate 1000] [--seconds 20] [--issuer-ms 50] [--partitions 6] [--fetch-wait-ms 2]", run: measured(LatencyBenchmark.run)),
        Scenario(
            name: "inflight", summary: "a 1 s issuer at 2,000/s (~2,000 calls in flight): sustained rate, worker RSS and threads",
            options: "[--rate 2000] [--seconds 20] [--issuer-ms 1000] [--partitions 6]", run: measured(InFlightBenchmark.run)),
        Scenario(
            name: "deadline", summary: "heavy-tailed issuer at ~2x capacity: results after deadline, deadline-aware vs FIFO worker",
            options: "[--rate 1100] [--seconds 30] [--max-in-flight 256] [--partitions 6]", run: measured(DeadlineBenchmark.run)),
        Scenario(
            name: "soak", summary: "a moderate rate for a long time: worker RSS at start and end",
            options: "[--rate 300] [--seconds 600] [--partitions 6] [--horizon-seconds 120] [--warmup-seconds S]", run: measured(SoakBenchmark.run)),
        Scenario(
            name: "isolation", summary: "healthy program's throughput and p99 with the other issuer healthy, then hanging",
            options: "[--healthy-rate 400] [--failing-rate 100] [--seconds 15] [--partitions 6]", run: measured(IsolationBenchmark.run)),
        Scenario(
            name: "instructions", summary: "the worker under valgrind callgrind: instructions and allocations per request (noise-free)",
            options: "[--requests 500] [--burst 50] [--partitions 6] [--idle-seconds 5] [--out DIR] [--tool callgrind|dhat] [--reply-curve p256|x25519]",
            run: measured(InstructionsBenchmark.run)),
        Scenario(
            name: "jwe", summary: "the result JWE per reply-key curve (P-256, X25519), in one process: CPU per seal, on the sealing thread, per decryption",
            options: "[--seals 5000] [--payload-bytes 3500]", run: measured(JWEBenchmark.run)),
        Scenario(
            name: "compare", summary: "the same load through provisioner worker and a peer worker (../shared/peers/goworker), paired runs: rates and CPU µs/request",
            options: "--peer PATH [--runs 3] [--burst 6000] [--rate 1000] [--seconds 10] [--partitions 6] [--in-flight 512] [--reply-curve p256|x25519]",
            run: measured(CompareBenchmark.run)),
        Scenario(
            name: "horizon", summary: "duplicate horizon: index memory at 24 h of a partition's answers, and marker catch-up time",
            options: "[--rate 300] [--hours 24] [--markers 500000]", run: measured(HorizonBenchmark.run)),
        Scenario(
            name: HTTPClientBenchmark.name, summary: HTTPClientBenchmark.summary,
            options: "[--clients curl,urlsession] [--requests 5000] [--in-flight 64] [--sustained-in-flight 2000] "
                + "[--delay-ms 1000] [--seconds 8] [--body-bytes 2048]",
            run: runHTTPClient),
        Scenario(
            name: ReplyBenchmark.name,
            summary: "client processes with their own reply partitions: handshake-to-decrypted-payload latency, messages read per answer, routed vs shared topic",
            options: "[--clients 4] [--rate 1000] [--seconds 20] [--issuer-ms 50] [--partitions 6] [--fetch-wait-ms 2]", run: runReply),
    ]

    /// The `--help` text: usage and every scenario with its options.
    static var help: String {
        var lines = [
            "usage: provisioner-bench <scenario> [--json] [scenario options]",
            "",
            "runs a benchmark scenario and prints an aligned table, or with --json one JSON object.",
            "",
            "scenarios:",
        ]
        let width = scenarios.map(\.name.count).max() ?? 0
        for scenario in scenarios {
            lines.append("  " + scenario.name + String(repeating: " ", count: width + 2 - scenario.name.count) + scenario.summary)
            lines.append("  " + String(repeating: " ", count: width + 2) + scenario.options)
        }
        return lines.joined(separator: "\n")
    }

    /// Runs the command line `words` (without the program name) and returns the exit status.
    public static func run(_ words: [String]) -> Int32 {
        guard let first = words.first, first != "help" else {
            print(help)
            return words.isEmpty ? 2 : 0
        }
        return exitStatus(of: "provisioner-bench") {
            var arguments = try CommandArguments(words, switchNames: switchNames)
            if arguments.flag("help") {
                print(help)
                return 0
            }
            return try run(&arguments)
        }
    }

    /// Picks the scenario named by the first positional word, runs it and prints its report.
    private static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        guard let scenarioName = arguments.popPositional() else {
            throw UsageError("name a scenario: " + scenarios.map(\.name).joined(separator: ", "))
        }
        guard let scenario = scenarios.first(where: { $0.name == scenarioName }) else {
            throw UsageError("unknown scenario '\(scenarioName)'; scenarios: " + scenarios.map(\.name).joined(separator: ", "))
        }
        let json = arguments.flag("json")
        guard let report = try scenario.run(&arguments) else { return 0 }
        print(json ? report.json : report.renderTable())
        return 0
    }

    /// The runner of a scenario whose options are all `BenchOptions` reads: reads them, refuses
    /// any other option, and runs it.
    private static func measured<Options: BenchOptions>(
        _ run: @escaping @Sendable (Options, @escaping (String) -> Void) throws -> BenchmarkReport
    ) -> @Sendable (inout CommandArguments) throws -> BenchmarkReport? {
        { arguments in
            var options = Options()
            try options.read(&arguments)
            try arguments.rejectUnknown()
            return try run(options, progress)
        }
    }

    /// A progress line on standard error (the report goes to standard output).
    private static func progress(_ line: String) { printError("bench: " + line) }

    /// `http-client`: the comparison, or one of its child roles (`--role server|client`, internal).
    private static func runHTTPClient(_ arguments: inout CommandArguments) throws -> BenchmarkReport? {
        let defaults = HTTPClientBenchmarkOptions()
        var options = defaults
        if let clients = arguments.option("clients") {
            options.clients = clients.split(separator: ",").map(String.init)
            guard !options.clients.isEmpty, options.clients.allSatisfy({ $0 == "curl" || $0 == "urlsession" }) else {
                throw UsageError("--clients takes curl, urlsession or both separated by a comma")
            }
        }
        options.burstRequests = try arguments.integer("requests", default: defaults.burstRequests, in: 1...1_000_000)
        options.burstInFlight = try arguments.integer("in-flight", default: defaults.burstInFlight, in: 1...10_000)
        options.sustainedInFlight = try arguments.integer("sustained-in-flight", default: defaults.sustainedInFlight, in: 1...10_000)
        options.sustainedDelayMs = try arguments.integer("delay-ms", default: defaults.sustainedDelayMs, in: 1...60_000)
        options.sustainedSeconds = try arguments.integer("seconds", default: defaults.sustainedSeconds, in: 3...600)
        options.bodyBytes = try arguments.integer("body-bytes", default: defaults.bodyBytes, in: 16...1_000_000)
        let role = arguments.option("role")
        switch role {
        case nil:
            try arguments.rejectUnknown()
            return try HTTPClientBenchmark.run(options)
        case "server":
            try arguments.rejectUnknown()
            try HTTPClientBenchmark.serve()
            return nil
        case "client":
            let client = try arguments.requiredOption("client")
            let phase = try arguments.requiredOption("phase")
            let port = try arguments.integer("port", default: 0, in: 1...65_535)
            try arguments.rejectUnknown()
            try HTTPClientBenchmark.drive(client: client, phase: phase, port: UInt16(port), options: options)
            return nil
        default:
            throw UsageError("--role takes server or client (internal: used by the benchmark's child processes)")
        }
    }

    /// `reply`: routed vs shared-topic answers from the backend's view, or its child role (`--role client`, internal).
    private static func runReply(_ arguments: inout CommandArguments) throws -> BenchmarkReport? {
        if arguments.option("role") == "client" {
            let mode = try arguments.requiredOption("mode")
            guard mode == "routed" || mode == "shared" else { throw UsageError("--mode takes routed or shared") }
            let bootstrap = try arguments.requiredOption("bootstrap")
            let partition = try arguments.integer("partition", default: 0, in: 0...Int(Int32.max))
            let rate = try arguments.number("rate", default: 250, in: 0.1...100_000)
            let seconds = try arguments.integer("seconds", default: 20, in: 1...3_600)
            let fetchWaitMs = try arguments.integer("fetch-wait-ms", default: 2, in: 0...500)
            try arguments.rejectUnknown()
            try ReplyBenchmark.drive(mode: mode, bootstrap: bootstrap, partition: Int32(partition), rate: rate, seconds: seconds,
                                     fetchWaitMs: fetchWaitMs)
            return nil
        }
        var options = ReplyBenchmark.Options()
        try options.read(&arguments)
        try arguments.rejectUnknown()
        return try ReplyBenchmark.run(options, progress: progress)
    }
}
