import Contract
import Foundation
import Harness
import HTTP
import Kafka
import Observability
import Simulator
import Testing
import TestSupport

extension ReliabilityTests {
    /// A `provisioner worker` process reads the Imprint API key and the audit key from files in a
    /// Kubernetes-style secret volume. Under a steady load the key file is swapped to a new key
    /// while the issuer accepts both; once the worker reports the reload, the issuer accepts only
    /// the new key and the load goes on. Every request must end in one final that matches the
    /// issuer's call log (each provisioned request's handshake called exactly once, none refused
    /// for its key). Then the key file goes missing: `/readyz` fails naming the key and the
    /// reason while requests are still served with the last good key, and passes again once the
    /// file is back. No key appears in the worker's logs, `/metrics` or `/readyz`.
    @Test("an issuer API key file swapped under load: 0 lost, finals match the issuer's calls; a missing file fails /readyz with the reason and recovers")
    func secretFileRotation() async throws {
        let book = CanaryBook()
        let oldKey = book.mint("ImprintOld", label: "Imprint API key before the swap")
        let newKey = book.mint("ImprintNew", label: "Imprint API key after the swap")
        let auditKey = book.mint("AuditKey", label: "audit pseudonym key (file)", hexLength: 40)
        func profile(_ key: String, retiring: [String]) -> SimulatorProfile {
            // 300 ms calls keep several in flight whenever the key changes.
            SimulatorProfile(allIssuers: LoadRule(latency: .fixed(milliseconds: 300)),
                             programs: [SimulatorProgram(name: "demo-imprint", issuer: .imprint, apiKey: Sensitive(key),
                                                         retiringAPIKeys: retiring.map(Sensitive.init))])
        }
        let partitions = 3
        let stack = try EmbeddedStack(brokers: 1, partitions: partitions, profile: profile(oldKey, retiring: []))
        defer { stack.stop() }
        let volume = try SecretVolume(["imprint-api-key": oldKey + "\n", "audit-key": auditKey])
        let files = { (imprint: String?) -> [String: String] in
            var contents = ["audit-key": auditKey]
            contents["imprint-api-key"] = imprint
            return contents
        }

        let group = UniqueName.make("reliability-secret-files")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(group)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configText = JSONValue.parsed(Array(stack.configurationFileText(groupID: group).utf8))
            .setting("programs.demo-imprint.api_key_env", nil)
            .setting("programs.demo-imprint.api_key_file", .string(volume.path("imprint-api-key")))
            .setting("audit.pseudonym_key_env", nil)
            .setting("audit.pseudonym_key_file", .string(volume.path("audit-key")))
            .setting("secrets", .object(["reload_interval_ms": .integer(200)]))
        let configPath = directory.appendingPathComponent("worker.json").path
        try Data(configText.bytes).write(to: URL(fileURLWithPath: configPath))
        let port = try #require(FreePort.pick())
        var environment = stack.environment
        environment["PROVISIONER_AUDIT_KEY"] = nil
        environment["PROVISIONER_WORKER_ID"] = "secret-files-w1"
        environment["PROVISIONER_LOG__LEVEL"] = "info"  // partition events tell when it owns the partitions
        environment["PROVISIONER_HTTP__LISTEN"] = "127.0.0.1:\(port)"
        let child = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                     arguments: ["worker", "--config", configPath, "--exit-with-parent"], environment: environment)
        defer { child.kill() }
        let owned = await Waiting.until(timeoutMs: 60_000) { ChildWorkerLog(process: child).ownedPartitions.count == partitions }
        try #require(owned, "the worker did not take the partitions: \(child.standardErrorLines.suffix(10))")

        let http = HTTPClient()
        defer { http.shutdown() }
        var endpointTexts: [(name: String, blob: [UInt8])] = []
        func get(_ path: String) async -> (status: Int, body: String)? {
            guard case .success(let response) = await http.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(port)\(path)",
                                                                                      timeoutMs: 5_000)) else { return nil }
            endpointTexts.append(("worker \(path)", response.body))
            return (response.status, String(decoding: response.body, as: UTF8.self))
        }
        func reloads() async -> Double {
            guard let metrics = await get("/metrics") else { return -1 }
            let line = metrics.body.split(separator: "\n").first { $0.hasPrefix("provisioner_secret_reloads_total ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? -1
        }
        #expect(await reloads() == 0)
        #expect(await get("/readyz")?.status == 200)

        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
        defer { collector.stop() }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 2)
        let load = LoadGenerator(producer: producer, topic: stack.topics.requests, partitions: partitions, perSecond: 20, total: nil) { index in
            try factory.provision(program: "demo-imprint", wallet: index % 2 == 0 ? .applePay : .googleWallet, cardID: "pm_rotate\(index)")
        }

        // MARK: The swap, under load.
        try await Task.sleep(for: .seconds(3))
        stack.simulator.replaceProfile(profile(newKey, retiring: [oldKey]))
        try volume.swap(files(newKey))
        let swappedAt = Timestamps.nowMs()
        var reloaded = false
        for _ in 0..<50 where !reloaded {
            reloaded = await reloads() == 1
            if !reloaded { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(reloaded, "the worker did not report the new key file")
        let reloadMs = Timestamps.nowMs() - swappedAt
        // Calls admitted before the reload carry the old key: let them end, then retire it.
        try await Task.sleep(for: .seconds(2))
        stack.simulator.replaceProfile(profile(newKey, retiring: []))
        let newOnlyFrom = load.sent.count
        try await Task.sleep(for: .seconds(3))

        // MARK: The file goes missing, then comes back.
        try volume.swap(files(nil))
        var unready: (status: Int, body: String)?
        for _ in 0..<50 {
            if let readiness = await get("/readyz"), readiness.status == 503 { unready = readiness; break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let reason = try #require(unready, "/readyz did not fail while the key file was missing").body
        #expect(reason.contains("programs.demo-imprint.api_key_file") && reason.contains(volume.path("imprint-api-key"))
                    && reason.contains("No such file or directory") && reason.contains("the last good value stays in use"), "\(reason)")
        let missingFrom = load.sent.count
        try await Task.sleep(for: .seconds(2))
        let missingUntil = load.sent.count
        try volume.swap(files(newKey))
        var readyAgain = false
        for _ in 0..<50 where !readyAgain {
            readyAgain = await get("/readyz")?.status == 200
            if !readyAgain { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(readyAgain, "/readyz did not pass again once the file was back")
        try await Task.sleep(for: .seconds(1))
        await load.stop()

        // MARK: Every request answered, as the issuer's log says.
        let sent = load.sent
        #expect(load.failed.isEmpty, "the load generator could not send: \(load.failed.prefix(3))")
        #expect(newOnlyFrom > 40 && missingUntil > missingFrom, "load before and after each step (\(newOnlyFrom), \(missingFrom)..\(missingUntil) of \(sent.count))")
        let ids = sent.map(\.request.requestID)
        let answered = collector.wait(timeoutMs: 60_000) { snapshot in ids.allSatisfy { snapshot.final($0) != nil } }
        let snapshot = collector.snapshot
        let lost = ids.filter { snapshot.final($0) == nil }
        #expect(answered && lost.isEmpty, "\(lost.count) of \(ids.count) requests got no final result: \(lost.prefix(5))")
        let calls = Dictionary(stack.simulator.calls.map { ($0.handshake, $0.count) }, uniquingKeysWith: +)
        var mismatches: [String] = []
        for item in sent {
            guard let final = snapshot.final(item.request.requestID), let handshake = item.request.handshake else { continue }
            let count = calls[handshake] ?? 0
            if final.status != .provisioned || count != 1 {
                mismatches.append("\(item.request.requestID): \(final.status.rawValue) \(final.code?.rawValue ?? "") \(final.message), issuer calls \(count)")
            }
        }
        #expect(mismatches.isEmpty, "finals that are not the issuer's answer: \(mismatches.count) of \(sent.count): \(mismatches.prefix(5))")

        // MARK: No key in what the worker wrote or served.
        _ = await get("/metrics")
        let stderr = child.standardErrorLines
        let entries = stderr.compactMap { try? JSONParser().parse(Array($0.utf8)) }
        #expect(entries.filter { $0["msg"]?.stringValue?.hasPrefix("secret file unusable") ?? false }.count == 1, "logged once")
        #expect(entries.contains { $0["msg"]?.stringValue?.hasPrefix("secret file usable again") ?? false })
        let leaks = CanaryBook.find(book.all, in: endpointTexts + [("worker stderr", Array(stderr.joined(separator: "\n").utf8))])
        #expect(leaks.isEmpty, "\(leaks.prefix(5))")
        child.terminate()
        #expect(try await child.waitForExit(timeout: .seconds(30)) == .exited(0))
        print("RELIABILITY {\"test\":\"secret_file_rotation\",\"requests\":\(sent.count),\"lost\":\(lost.count),\"mismatches\":\(mismatches.count),"
              + "\"reload_seen_ms\":\(reloadMs),\"served_while_file_missing\":\(missingUntil - missingFrom)}")
    }
}
