import Harness
import Observability
#if canImport(Glibc)
import Glibc
#endif

/// `provisioner demo`: the main job on embedded defaults.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "runs the main job on embedded defaults (broker, simulator, workers, mixed load)"
    static let help = """
        usage: provisioner demo [--requests N] [--workers N] [--partitions N] [--timeout SECONDS] [--log-level L] [--json]

        Starts, in this process, an embedded Kafka cluster with the pipeline topics, the issuer
        simulator (Imprint, DCS, Gnosis Pay, Worldpay) and N workers in one consumer group on the
        embedded defaults (Config/demo.json). Produces a mixed load: every wallet on every issuer,
        each simulator failure card (missing, foreign, inactive, already provisioned, slow, 504
        after/without applying, hanging, flaky, ineligible device), expired handshakes, invalid and
        duplicate requests, a reused nonce, undecodable messages, and Worldpay payments followed by
        settle / partial settle / cancel through the links sealed in their results (demo-worldpay
        signs its requests with a key of the run: payment actions need a signing program). Shows live progress, then a summary:
        final statuses, latency per program, deadline misses, payloads decrypted and verified.
        Every request carries its expected outcome; exits 0 when every one got it, 1 otherwise.

        options:
          --requests N      requests in the mix (default 300, at least the special cases)
          --workers N       workers in the group (default 2)
          --partitions N    partitions per topic (default 6)
          --timeout S       give up after S seconds (default 60)
          --log-level L     stream worker logs (JSON lines) at level L to stderr
          --json            print the summary as JSON on stdout
        """
    static let switchNames: Set<String> = ["json"]

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        var options = DemoOptions()
        options.total = try arguments.integer("requests", default: 300, in: 1...100_000)
        options.workers = try arguments.integer("workers", default: 2, in: 1...16)
        options.partitions = try arguments.integer("partitions", default: 6, in: 1...64)
        options.timeoutSeconds = try arguments.integer("timeout", default: 60, in: 5...3_600)
        if let level = arguments.option("log-level") {
            guard let parsed = LogLevel(name: level) else { throw UsageError("--log-level must be debug, info, notice, warning or error") }
            options.logLevel = parsed
        }
        let json = arguments.flag("json")
        try arguments.rejectUnknown()
        let interactive = isatty(2) != 0
        let report = try DemoRun.run(options) { line in
            if interactive { printError(line) } else { printError("demo: " + line) }
        }
        writeStandardOutput((json ? report.json : report.text) + "\n")
        return report.succeeded ? 0 : 1
    }
}
