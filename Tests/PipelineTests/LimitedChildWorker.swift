import Contract
import Foundation
import Harness
import HTTP
import Observability
import Synchronization
import TestSupport

/// A `provisioner worker --exit-with-parent` process of a rig's group with `demo-imprint` limited
/// group-wide, serving `/metrics` on a port of its own so the test can read its share.
final class LimitedChildWorker: Sendable {
    let name: String
    let process: ChildProcess

    /// Starts the worker with the rig's configuration file at `configPath` (its `http.listen` on
    /// port 0) and the stack's environment, plus the group-wide `rate_limit` (`GroupLimitTests.limit`)
    /// and short drains. `GROUP_LIMIT_KAFKA_DEBUG=1` in the test's environment adds librdkafka's
    /// `debug=cgrp` to the worker's log (debug level).
    init(_ rig: PipelineRig, name: String, configPath: String) throws {
        var environment = rig.stack.environment
        environment["PROVISIONER_WORKER_ID"] = name
        environment["PROVISIONER_LOG__LEVEL"] = "info"
        // Eager rebalances: librdkafka 2.0.2 loses a cooperative member's assignment when an
        // asynchronous commit sent while it waits in JoinGroup comes back ILLEGAL_GENERATION
        // (confluentinc/librdkafka#4059, fixed in 2.10.0), and with commits every 100 ms under
        // load that repeats round after round (docs/TESTING.md). An eager member revokes
        // everything before it joins, so it has nothing to commit meanwhile.
        // GROUP_LIMIT_STRATEGY=cooperative-sticky runs the test with the worker's default.
        environment["PROVISIONER_KAFKA_CONSUMER__PARTITION_ASSIGNMENT_STRATEGY"] =
            ProcessInfo.processInfo.environment["GROUP_LIMIT_STRATEGY"] ?? "roundrobin"
        if ProcessInfo.processInfo.environment["GROUP_LIMIT_KAFKA_DEBUG"] != nil {
            // Diagnosis: librdkafka's consumer-group state machine, in the worker's log (debug level).
            environment["PROVISIONER_KAFKA_CONSUMER__DEBUG"] = "cgrp"
            environment["PROVISIONER_LOG__LEVEL"] = "debug"
        }
        let limit = GroupLimitTests.limit
        environment["PROVISIONER_PROGRAMS__DEMO_IMPRINT__RATE_LIMIT"] = #"{"per_second": \#(limit.perSecond), "burst": \#(limit.burst)}"#
        environment["PROVISIONER_REBALANCE__DRAIN_TIMEOUT_MS"] = "1000"
        environment["PROVISIONER_SHUTDOWN__DRAIN_TIMEOUT_MS"] = "2000"
        self.name = name
        process = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                   arguments: ["worker", "--config", configPath, "--exit-with-parent"], environment: environment)
    }

    /// Whether the process still runs.
    var isRunning: Bool { process.termination == nil }

    /// The port of its `/metrics`, from its "serving …" log line (nil until it logged it).
    var metricsPort: UInt16? {
        for line in process.standardErrorLines where line.contains("serving /healthz") {
            guard let entry = try? JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(Array(line.utf8)),
                  let port = entry["port"]?.int64Value else { continue }
            return UInt16(exactly: port)
        }
        return nil
    }

    /// `provisioner_limit_share_rate_per_second{program="demo-imprint"}` from its `/metrics`, or nil
    /// when the endpoint does not answer (not yet listening, or gone).
    func rateShare(_ http: HTTPClient) -> Double? {
        guard let metricsPort else { return nil }
        let answer = Mutex<Result<HTTPClientResponse, HTTPTransportError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        http.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(metricsPort)/metrics", timeoutMs: 2_000)) { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        guard case .success(let response)? = answer.withLock({ $0 }), response.status == 200 else { return nil }
        let text = String(decoding: response.body, as: UTF8.self)
        let prefix = "provisioner_limit_share_rate_per_second{"
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) && line.contains(#"program="\#(GroupLimitTests.program)""#) {
            return line.split(separator: " ").last.flatMap { Double($0) }
        }
        return nil
    }

    /// Its assign / revoke / lost log lines (`msg` and `partitions`), for a failure's diagnosis.
    var rebalanceLines: [String] {
        process.standardErrorLines.filter {
            $0.contains("\"partitions") || $0.contains("share of the group-wide") || ($0.contains("\"logger\":\"librdkafka\"") && !$0.contains("\"level\":\"debug\""))
        }
    }
}
