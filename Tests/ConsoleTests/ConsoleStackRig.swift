@testable import Console
import Contract
import Foundation
import Harness
import HTTP
import Kafka
import Observability
import Pipeline
@testable import Recovery
import Synchronization
import TestSupport

/// A real stack for the console: embedded Kafka, the issuer simulator, one worker (its /metrics
/// scraped by the console), the console on a free loopback port, replayable dead letters whose
/// values carry known secrets, undecodable requests the worker dead-letters itself, and an
/// optional steady load.
final class ConsoleStackRig: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init or itself thread-safe.
    static let aliceToken = "alice-" + Crypto.hex(Crypto.randomBytes(12))
    static let viewerToken = "victor-" + Crypto.hex(Crypto.randomBytes(12))
    let stack: EmbeddedStack
    let worker: Worker
    let server: ConsoleServer
    let context: ConsoleContext
    let group: String
    let factory: RequestFactory
    let producer: KafkaProducer
    let logs = CapturingLogHandler()
    let workerLogs = CapturingLogHandler()
    /// The replayable dead letters seeded (Google Pay provisions whose result "could not be published").
    let replayable: [GeneratedRequest]
    /// Secrets that must never reach a page, a stream or the console's log.
    let canaries: [String]
    private let loadRunning = Atomic<Bool>(false)
    private let loadStopped = DispatchSemaphore(value: 0)

    var baseURL: String { "http://127.0.0.1:\(server.port)" }

    /// `configure` changes the worker's configuration (e.g. a small `maxPending`).
    init(replayableCount: Int = 4, name: String, configure: (inout WorkerConfiguration) -> Void = { _ in }) throws {
        stack = try EmbeddedStack(brokers: 1, partitions: 3)
        group = UniqueName.make(name)
        let replaySecret = "ReplayKey" + Crypto.hex(Crypto.randomBytes(12))
        var environment = stack.environment
        environment["CONSOLE_TEST_REPLAY_KEY"] = replaySecret
        let configuration = try stack.configuration(groupID: group, workerID: "console-w1") {
            $0.replaySigningSecret = .environment("CONSOLE_TEST_REPLAY_KEY")
            configure(&$0)
        }
        worker = try Worker(configuration: configuration, environment: environment,
                            logger: Logger(label: "worker", minimumLevel: .notice, handler: workerLogs), metrics: MetricsRegistry())
        try worker.start()
        factory = try RequestFactory()
        producer = try KafkaProducer(configuration: stack.producerProperties)

        var canaries = [Self.aliceToken, Self.viewerToken, replaySecret]
        var console = ConsoleConfiguration()
        console.listen = HostPort("127.0.0.1:0")!
        console.metricsEndpoints = ["http://127.0.0.1:\(worker.observabilityPort ?? 0)/metrics"]
        console.scrapeIntervalMs = 1_000
        console.maxReplayRate = 20
        let alice = TokenHash(token: Self.aliceToken, iterations: TokenHash.minimumIterations)
        let victor = TokenHash(token: Self.viewerToken, iterations: TokenHash.minimumIterations)
        canaries += [alice.description, victor.description]
        console.tokens = [ConsoleToken(name: "alice", role: .replayer, hash: alice), ConsoleToken(name: "victor", role: .viewer, hash: victor)]
        let monitor = MetricsMonitor(endpoints: console.metricsEndpoints, intervalMs: console.scrapeIntervalMs)
        monitor.start()
        context = ConsoleContext(kafka: stack.consumerProperties, topics: stack.topics, groupID: group, configuration: console,
                                 replayKeys: ReplayKeyring(signer: RequestSigner(secret: Sensitive(replaySecret))),
                                 logger: Logger(label: "console", minimumLevel: .debug, handler: logs), monitor: monitor)
        server = try ConsoleServer(host: "127.0.0.1", port: 0, context: context)

        // Replayable dead letters, written as the worker writes them (by its builder: provenance headers and
        // the dlq.mac under the replay key, original key and value).
        let now = Timestamps.nowMs()
        let builder = DeadLetterBuilder(deadLetterTopic: stack.topics.deadLetters, parkedTopic: stack.topics.parked, worker: "console-w0",
                                        group: group, seal: DeadLetterSeal(key: Sensitive(replaySecret)))
        var seeded: [GeneratedRequest] = []
        for index in 0..<replayableCount {
            let cardID = "pm_cnry" + Crypto.hex(Crypto.randomBytes(10))
            let request = try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: cardID,
                                                requestID: factory.requestID("console-dl\(index)"))
            canaries += Self.secretStrings(in: request.value)
            let verdict = DeadLetterReplayPolicy.verdict(code: .publishFailed, summary: DeadLetterSummary(value: request.value, recordTimestampMs: now),
                                                         issuerMayHaveBeenCalled: false, nowMs: now)
            let letter = builder.letter(key: request.key, value: request.value, headers: [],
                                        source: .init(partition: TopicPartition(topic: stack.topics.requests, partition: 0),
                                                      offset: Int64(1_000 + index), timestampMs: now),
                                        code: .publishFailed, reason: "the result could not be published", attempts: 3, firstFailedAtMs: now,
                                        nowMs: now, replayOf: nil, replay: verdict, parkedReason: "")
            _ = try producer.sendAndWait(letter.message)
            seeded.append(request)
        }
        replayable = seeded
        // Undecodable requests: the worker dead-letters them (not_json, never replayable); their bytes hold a secret.
        for _ in 0..<2 {
            let secret = "JunkSecret" + Crypto.hex(Crypto.randomBytes(10))
            canaries.append(secret)
            _ = try producer.sendAndWait(KafkaOutgoingMessage(topic: stack.topics.requests, key: Array("k".utf8),
                                                               value: Array("{\"card\": {\"id\": \"\(secret)\"".utf8), headers: []))
        }
        self.canaries = canaries
    }

    /// Every string in `value` outside the redactor's visible paths, 8 characters or longer.
    static func secretStrings(in value: [UInt8]) -> [String] {
        guard let document = try? JSONParser().parse(value) else { return [] }
        var found: [String] = []
        func walk(_ node: JSONValue, _ path: String) {
            switch node {
            case .object(let members): for (key, member) in members { walk(member, path.isEmpty ? key : "\(path).\(key)") }
            case .array(let items): items.forEach { walk($0, path) }
            case .string(let text) where text.count >= 8 && !DeadLetterRedactor.visiblePaths.contains(path): found.append(text)
            default: break
            }
        }
        walk(document, "")
        return found
    }

    /// Produces a Google Pay request every `intervalMs` until `stopLoad()`.
    func startLoad(intervalMs: Int = 100) {
        loadRunning.store(true, ordering: .relaxed)
        let (factory, producer, topic) = (self.factory, self.producer, stack.topics.requests)
        let thread = Thread { [self] in
            var index = 0
            while loadRunning.load(ordering: .relaxed) {
                if let request = try? factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_load_\(index)",
                                                        requestID: factory.requestID("console-load")) {
                    try? producer.send(KafkaOutgoingMessage(topic: topic, key: request.key, value: request.value)) { _ in }
                }
                index += 1
                usleep(useconds_t(intervalMs * 1000))
            }
            loadStopped.signal()
        }
        thread.start()
    }

    func stopLoad() {
        guard loadRunning.exchange(false, ordering: .relaxed) else { return }
        loadStopped.wait()
    }

    /// Waits until the worker has dead-lettered the undecodable requests (so the lists are complete).
    func waitForWorkerDeadLetters(timeoutMs: Int64 = 60_000) -> Bool {
        let deadline = Timestamps.nowMs() + timeoutMs
        while Timestamps.nowMs() < deadline {
            if let entries = try? DeadLetterStore(properties: stack.consumerProperties).entries(topic: stack.topics.deadLetters),
               entries.filter({ $0.provenance?.code.rawValue == "not_json" }).count >= 2 {
                return true
            }
            usleep(200_000)
        }
        return false
    }

    func stop() {
        stopLoad()
        server.stop()
        context.monitor.stop()
        producer.close(timeoutMs: 5_000)
        worker.shutdown()
        worker.waitUntilStopped()
        stack.stop()
    }

    /// `text` variants a leak could take: raw, hex, base64 and base64url at each alignment.
    static func variants(_ secret: String) -> [String] {
        let bytes = Array(secret.utf8)
        var result = [secret, Crypto.hex(bytes), Crypto.hex(bytes).uppercased()]
        for shift in 0..<3 {
            let encoded = Array(Crypto.base64Encode([UInt8](repeating: 0, count: shift) + bytes))
            let start = ((shift + 2) / 3) * 4
            let end = ((shift + bytes.count) / 3) * 4
            guard end - start >= 8 else { continue }
            let core = String(encoded[start..<end])
            result.append(core)
            result.append(core.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"))
        }
        return result
    }

    /// The canaries (any variant) found in `text`.
    func leaks(in text: String) -> [String] {
        canaries.filter { secret in Self.variants(secret).contains { text.contains($0) } }
    }
}
