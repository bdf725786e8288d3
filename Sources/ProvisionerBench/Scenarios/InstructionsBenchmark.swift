import Contract
import Foundation
import Harness
import Observability
import ProvisionerCLI

/// `bench instructions`: the noise-free figure. The worker runs under `valgrind --tool=callgrind`
/// with instrumentation off; after the warm-up it is switched on (`callgrind_control -i on`), a
/// fixed batch of Imprint requests (Apple Pay and Google Wallet, half and half) goes through in
/// bursts, each awaited, and the counters are dumped. Instructions and allocator calls (`malloc`,
/// `calloc`, `realloc`, `posix_memalign`, `aligned_alloc`) per request come from that dump; a
/// second dump over an idle window gives the idle instructions per second, so the reader sees how
/// much of the figure is timers rather than requests. The broker, the simulator and this process
/// run outside valgrind, so only the worker is counted.
enum InstructionsBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// Requests in the measured batch.
        var requests = 500
        /// Requests per burst (each burst is awaited before the next, so no deadline passes under valgrind).
        var burst = 50
        /// Partitions per topic.
        var partitions = 6
        /// Seconds of the idle window measured after the batch.
        var idleSeconds = 5
        /// `callgrind` (counts) or `dhat` (allocation sites over the whole run, written at exit to `dhat.out`).
        var tool = "callgrind"
        /// The curve of the requests' reply keys (P-256 by default; X25519 to measure that option).
        var replyCurve: JWKCurve = .p256
        /// Where callgrind writes its files (kept after the run for `callgrind_annotate`).
        var directory = NSTemporaryDirectory() + "provisioner-callgrind-\(getpid())"
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            requests = try arguments.integer("requests", default: requests, in: 1...100_000)
            burst = try arguments.integer("burst", default: burst, in: 1...10_000)
            partitions = try arguments.partitions(default: partitions)
            idleSeconds = try arguments.integer("idle-seconds", default: idleSeconds, in: 1...600)
            if let out = arguments.option("out") { directory = out }
            if let name = arguments.option("tool") {
                guard name == "callgrind" || name == "dhat" else { throw UsageError("--tool takes callgrind or dhat") }
                tool = name
            }
            replyCurve = try arguments.replyCurve()
        }
    }

    /// What one callgrind dump says.
    struct Dump {
        var instructions: UInt64 = 0
        var allocations: UInt64 = 0
        var path = ""
    }

    /// Runs the scenario; `progress` gets a line per step.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        try FileManager.default.createDirectory(atPath: options.directory, withIntermediateDirectories: true)
        let dhat = options.tool == "dhat"
        let wrapper = dhat ? ["valgrind", "--tool=dhat", "--dhat-out-file=" + options.directory + "/dhat.out"]
            : ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + options.directory + "/callgrind.out"]
        progress("starting the stack; the worker runs under \(options.tool) (slow start)")
        let rig = try BenchRig(partitions: options.partitions, profile: PipelineBench.profile(latency: #"{"distribution": "fixed", "ms": 0}"#),
                               groupID: "bench-instructions", wrapper: wrapper, readyTimeoutMs: 300_000,
                               replyCurve: options.replyCurve) {
            PipelineBench.tune(&$0, maxInFlight: 1_024, maxPending: 8_192)
        }
        defer { rig.stop() }
        let pid = rig.worker.pid
        // One burst of the measured mix first: reply keys and PassKit chains are then as warm as in
        // a long-running worker (the same backend keys and Apple chains recur).
        _ = rig.phase.run(try RequestPool.make(options.burst, mix: .imprint, factory: rig.factory, cardPrefix: "warm2"),
                          rate: 100_000, drainTimeoutMs: 120_000)
        if !dhat { try control(["-i", "on", String(pid)]) }
        progress("instrumentation on; \(options.requests) requests in bursts of \(options.burst)")
        var answered = 0
        var statuses: [ResultStatus: Int] = [:]
        let started = ProcessUsage.monotonicMilliseconds()
        var remaining = options.requests
        while remaining > 0 {
            let count = min(options.burst, remaining)
            remaining -= count
            let items = try RequestPool.make(count, mix: .imprint, factory: rig.factory)
            let figures = rig.phase.run(items, rate: 100_000, drainTimeoutMs: 120_000)
            answered += figures.answered
            for (status, number) in figures.statuses { statuses[status, default: 0] += number }
        }
        let batchSeconds = (ProcessUsage.monotonicMilliseconds() - started) / 1000
        if dhat {
            return BenchmarkReport(title: "dhat: worker under valgrind dhat, \(answered)/\(options.requests) answered", columns: [], rows: [],
                                   notes: ["dhat file (written when the worker exits): \(options.directory)/dhat.out"],
                                   json: #"{"scenario": "instructions", "tool": "dhat", "answered": \#(answered)}"#)
        }
        let batch = try dump(pid: pid, directory: options.directory)
        progress("batch: \(batch.instructions) instructions, \(batch.allocations) allocations in \(String(format: "%.1f", batchSeconds)) s; idle window \(options.idleSeconds) s")
        try control(["-z", String(pid)])
        sleep(UInt32(options.idleSeconds))
        let idle = try dump(pid: pid, directory: options.directory)
        let perRequest = Double(batch.instructions) / Double(max(1, options.requests))
        let allocationsPerRequest = Double(batch.allocations) / Double(max(1, options.requests))
        let idlePerSecond = Double(idle.instructions) / Double(max(1, options.idleSeconds))
        let idleShare = idlePerSecond * batchSeconds / Double(max(1, batch.instructions))

        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("instructions")
        writer.key("requests"); writer.integer(Int64(options.requests))
        writer.key("reply_curve"); writer.string(options.replyCurve.rawValue)
        writer.key("answered"); writer.integer(Int64(answered))
        writer.key("instructions_per_request"); writer.integer(Int64(perRequest))
        writer.key("allocations_per_request"); writer.integer(Int64(allocationsPerRequest.rounded()))
        writer.key("idle_instructions_per_second"); writer.integer(Int64(idlePerSecond))
        writer.key("batch_seconds"); writer.string(String(format: "%.1f", batchSeconds))
        writer.key("callgrind_file"); writer.string(batch.path)
        writer.endObject()
        let statusText = statuses.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        return BenchmarkReport(
            title: "instructions: worker under callgrind, \(options.requests) Imprint requests (Apple Pay + Google Wallet) in bursts of \(options.burst), "
                + "reply keys \(options.replyCurve.rawValue)",
            columns: ["REQUESTS", "ANSWERED", "INSTRUCTIONS/REQ", "ALLOCATIONS/REQ", "IDLE INSTR/S", "BATCH S"],
            rows: [[String(options.requests), String(answered), String(Int64(perRequest)), PipelineBench.figure(allocationsPerRequest, digits: 1),
                    String(Int64(idlePerSecond)), PipelineBench.figure(batchSeconds, digits: 1)]],
            notes: [
                "final statuses: \(statusText)",
                "idle timers account for about \(Int(idleShare * 100))% of the batch's instructions (idle rate × batch time)",
                "allocations: calls to malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign (not those the allocator makes itself)",
                "callgrind dump: \(batch.path) (callgrind_annotate it for the call sites)",
            ],
            json: writer.text)
    }

    /// Runs `callgrind_control` with `arguments`, waiting for it.
    private static func control(_ arguments: [String]) throws {
        let child = try ChildProcess(executable: "callgrind_control", arguments: arguments)
        guard BenchStack.waitForExit(child, timeoutMs: 120_000), case .exited(0)? = child.termination else {
            throw BenchmarkError("callgrind_control \(arguments.joined(separator: " ")) failed: "
                                 + (child.standardOutputLines + child.standardErrorLines).suffix(3).joined(separator: " | "))
        }
    }

    /// Dumps the counters and reads the new file.
    private static func dump(pid: Int32, directory: String) throws -> Dump {
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
        try control(["-d", String(pid)])
        let deadline = Timestamps.nowMs() + 60_000
        while Timestamps.nowMs() < deadline {
            let now = Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            if let name = now.subtracting(before).sorted().last {
                usleep(200_000)
                return try parse(directory + "/" + name)
            }
            usleep(100_000)
        }
        throw BenchmarkError("callgrind wrote no dump in \(directory)")
    }

    /// Totals and allocator calls of a callgrind file (name compression: `cfn=(id) name` once, then `cfn=(id)`).
    static func parse(_ path: String) throws -> Dump {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchmarkError("cannot read \(path)") }
        let allocators: Set<Substring> = ["malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign"]
        var names: [Substring: Substring] = [:]
        var result = Dump(path: path)
        var callee: Substring = ""
        var caller: Substring = ""
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("cfn=") || line.hasPrefix("fn=") {
                let value = line.drop { $0 != "=" }.dropFirst()
                var name = value
                if value.hasPrefix("("), let close = value.firstIndex(of: ")") {
                    let id = value[value.startIndex...close]
                    let rest = value[value.index(after: close)...].drop { $0 == " " }
                    if rest.isEmpty { name = names[id] ?? "" } else { names[id] = rest; name = rest }
                }
                if line.hasPrefix("cfn=") { callee = name } else { caller = name }
            } else if line.hasPrefix("calls="), allocators.contains(callee),
                      // glibc's realloc(NULL, n) and posix_memalign call malloc: one allocation, counted once.
                      !allocators.contains(caller), !caller.hasPrefix("_mid_memalign") {
                let count = line.dropFirst("calls=".count).prefix { $0 != " " }
                result.allocations += UInt64(count) ?? 0
            } else if line.hasPrefix("totals:") || line.hasPrefix("summary:") {
                let value = line.drop { $0 != ":" }.dropFirst().drop { $0 == " " }.prefix { $0 != " " }
                result.instructions = max(result.instructions, UInt64(value) ?? 0)
            }
        }
        return result
    }
}
