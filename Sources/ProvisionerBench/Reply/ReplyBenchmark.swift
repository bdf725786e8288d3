import Contract
import Dispatch
import Foundation
import Kafka
import Pipeline
import ProvisionerCLI
import ProvisionerClient
import Synchronization

/// `bench reply`: the backend's view. Several client processes (each its own OS process, each
/// with its own reply partition) offer a total rate of Google Wallet requests to one worker; each
/// measures from the handshake (request built) to the decrypted payload in hand, and counts the
/// Kafka messages it read per answer. Two phases: reply routing (`ProvisionerClient` on its own
/// partition) and the shared-topic baseline (every client reads all of `provisioning.results`).
enum ReplyBenchmark {
    /// The scenario's name.
    static let name = "reply"
    /// Options.
    struct Options: BenchOptions {
        /// Client processes.
        var clients = 4
        /// The load offered, over all clients (seconds per phase).
        var load = OpenLoad(rate: 1_000, seconds: 20)
        /// Simulator latency, ms.
        var issuerMs = 50
        /// How long the mock broker may hold a fetch, ms.
        var fetchWaitMs = 2
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            clients = try arguments.integer("clients", default: clients, in: 1...64)
            try load.read(&arguments)
            issuerMs = try arguments.issuerMs(default: issuerMs)
            fetchWaitMs = try arguments.integer("fetch-wait-ms", default: fetchWaitMs, in: 0...500)
        }
    }

    static let replyTopic = "bench.replies"

    /// What one client process measured.
    struct ClientFigures: Codable, Sendable {
        var mode: String
        var sent: Int
        var answered: Int
        var decrypted: Int
        var read: Int
        var latenciesMs: [Double]
        var error: String?
    }

    /// Runs both phases and reports them side by side.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let stack = try BenchStack(partitions: options.load.partitions,
                                   profile: PipelineBench.profile(latency: #"{"distribution": "fixed", "ms": \#(options.issuerMs)}"#),
                                   extraTopics: [replyTopic: options.clients])
        defer { stack.stop() }
        try stack.startWorker(groupID: "bench-reply") { document in
            PipelineBench.tune(&document, maxInFlight: 1_024, maxPending: 8_192, lingerMs: 0, fetchWaitMs: options.fetchWaitMs)
            document["results"] = .object(["reply_topics": .array([.string(replyTopic)])])
        }
        var rows: [[String]] = []
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string(name)
        writer.key("clients"); writer.integer(Int64(options.clients))
        writer.key("rate"); writer.integer(Int64(options.load.rate))
        writer.key("issuer_ms"); writer.integer(Int64(options.issuerMs))
        var notes: [String] = []
        for mode in ["routed", "shared"] {
            progress("\(mode): \(options.clients) client processes, \(options.load.rate)/s in total for \(options.load.seconds) s")
            let figures = runPhase(mode: mode, stack: stack, options: options)
            let latencies = figures.flatMap(\.latenciesMs).sorted()
            let answered = figures.reduce(0) { $0 + $1.answered }
            let sent = figures.reduce(0) { $0 + $1.sent }
            let read = figures.reduce(0) { $0 + $1.read }
            let decrypted = figures.reduce(0) { $0 + $1.decrypted }
            let perAnswer = answered > 0 ? Double(read) / Double(answered) : 0
            func quantile(_ q: Double) -> Double? {
                latencies.isEmpty ? nil : latencies[min(latencies.count - 1, Int((Double(latencies.count) * q).rounded(.down)))]
            }
            let text: (Double?) -> String = { $0.map { PipelineBench.figure($0, digits: 1) } ?? "-" }
            rows.append([mode == "routed" ? "reply routing (own partition)" : "shared results topic", "\(answered)/\(sent)",
                         text(quantile(0.5)), text(quantile(0.99)), text(quantile(0.999)), PipelineBench.figure(perAnswer, digits: 2)])
            writer.key(mode); writer.beginObject()
            writer.key("sent"); writer.integer(Int64(sent))
            writer.key("answered"); writer.integer(Int64(answered))
            writer.key("decrypted"); writer.integer(Int64(decrypted))
            writer.key("p50_ms"); if let number = decimal(quantile(0.5)) { writer.number(number) } else { writer.null() }
            writer.key("p99_ms"); if let number = decimal(quantile(0.99)) { writer.number(number) } else { writer.null() }
            writer.key("p99_9_ms"); if let number = decimal(quantile(0.999)) { writer.number(number) } else { writer.null() }
            writer.key("messages_read"); writer.integer(Int64(read))
            writer.key("messages_read_per_answer"); if let number = decimal(perAnswer) { writer.number(number) } else { writer.null() }
            writer.endObject()
            for failure in figures.compactMap(\.error) { notes.append("\(mode): a client failed: \(failure)") }
        }
        writer.endObject()
        notes += [
            "each client is its own OS process; latency: request built (the handshake's arrival) to its payload decrypted in the client (JWE ECDH-ES + A256GCM)",
            "Google Wallet requests on demo-imprint, simulator answering in \(options.issuerMs) ms; one worker process, linger.ms 0, fetch.wait.max.ms \(options.fetchWaitMs)",
            "messages read per answer: reply routing reads only the client's partition; the shared topic makes every client read every result",
            PipelineBench.machine,
        ]
        return BenchmarkReport(
            title: "reply: \(options.clients) client processes, \(options.load.rate)/s in total, \(options.load.seconds) s per mode, simulator \(options.issuerMs) ms",
            columns: ["MODE", "ANSWERED", "P50 MS", "P99 MS", "P99.9 MS", "READ/ANSWER"], rows: rows, notes: notes, json: writer.text)
    }

    private static func decimal(_ value: Double?) -> JSONNumber? {
        value.flatMap { JSONNumber(literal: String(format: "%.2f", $0)) }
    }

    private static func runPhase(mode: String, stack: BenchStack, options: Options) -> [ClientFigures] {
        let results = Mutex<[ClientFigures]>([])
        let group = DispatchGroup()
        for index in 0..<options.clients {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var figures = ClientFigures(mode: mode, sent: 0, answered: 0, decrypted: 0, read: 0, latenciesMs: [], error: nil)
                do {
                    let child = try PipedChildProcess(arguments: [
                        name, "--role", "client", "--mode", mode, "--bootstrap", stack.bootstrapServers,
                        "--partition", String(index), "--rate", String(Double(options.load.rate) / Double(options.clients)),
                        "--seconds", String(options.load.seconds), "--fetch-wait-ms", String(options.fetchWaitMs),
                    ])
                    var last: String?
                    while let line = child.readLine() { last = line }
                    let status = child.wait()
                    if let last, let decoded = try? JSONDecoder().decode(ClientFigures.self, from: Data(last.utf8)) {
                        figures = decoded
                    } else {
                        figures.error = "client \(index) exited with status \(status) without figures"
                    }
                } catch {
                    figures.error = "\(error)"
                }
                results.withLock { $0.append(figures) }
            }
        }
        group.wait()
        return results.withLock { $0 }
    }

    /// Child role `client`: offers `rate`/s for `seconds` in `mode` and prints its figures as one JSON line.
    static func drive(mode: String, bootstrap: String, partition: Int32, rate: Double, seconds: Int, fetchWaitMs: Int) throws {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<ClientFigures?>(nil)
        Task {
            let figures = await measure(mode: mode, bootstrap: bootstrap, partition: partition, rate: rate, seconds: seconds, fetchWaitMs: fetchWaitMs)
            box.withLock { $0 = figures }
            done.signal()
        }
        done.wait()
        let figures = box.withLock { $0 }!
        let encoder = JSONEncoder()
        guard let data = try? encoder.encode(figures) else { throw BenchmarkError("could not encode the figures") }
        print(String(decoding: data, as: UTF8.self))
    }

    private static func measure(mode: String, bootstrap: String, partition: Int32, rate: Double, seconds: Int, fetchWaitMs: Int) async -> ClientFigures {
        var figures = ClientFigures(mode: mode, sent: 0, answered: 0, decrypted: 0, read: 0, latenciesMs: [], error: nil)
        let kafka = ["bootstrap.servers": bootstrap]
        // nil: no answer; false: answered without a usable payload; true: payload decrypted.
        let send: @Sendable (ClientRequest) async -> Bool?
        let readCount: @Sendable () -> Int
        let close: @Sendable () -> Void
        do {
            if mode == "routed" {
                var configuration = ProvisionerClientConfiguration(kafka: kafka, replyTopic: replyTopic, replyPartition: partition,
                                                                   replyKey: try ECPrivateKey.generate())
                configuration.replyFetchWaitMs = fetchWaitMs
                let client = try ProvisionerClient(configuration: configuration)
                send = { request in
                    guard let answer = try? await client.provision(request) else { return nil }
                    return answer.payload != nil
                }
                readCount = { client.replyCounts.read }
                close = { client.close() }
            } else {
                let requester = try SharedTopicRequester(bootstrapServers: bootstrap, requestsTopic: TopicNames().requests,
                                                         resultsTopic: TopicNames().results, fetchWaitMs: fetchWaitMs)
                send = { await requester.provision($0) }
                readCount = { requester.read }
                close = { requester.close() }
            }
        } catch {
            figures.error = "\(error)"
            return figures
        }
        defer { close() }
        // Warm-up (not measured): connections, first fetches.
        for _ in 0..<5 { _ = await send(request(prefix: "warm-\(mode)-\(partition)")) }
        let readBefore = readCount()
        let total = Int(rate * Double(seconds))
        let samples = Samples()
        let clock = ContinuousClock()
        let start = clock.now
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<total {
                let due = start.advanced(by: .nanoseconds(Int64(Double(index) / rate * 1e9)))
                try? await Task.sleep(until: due, clock: clock)
                let request = request(prefix: "bench-\(mode)-\(partition)")
                let began = clock.now
                group.addTask {
                    guard let ok = await send(request) else { return }
                    let elapsed = clock.now - began
                    let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
                    samples.add(ms, decrypted: ok)
                }
            }
        }
        figures.sent = total
        (figures.latenciesMs, figures.decrypted) = samples.values
        figures.answered = figures.latenciesMs.count
        figures.read = readCount() - readBefore
        return figures
    }

    /// A Google Wallet request for a fresh card, its handshake arriving now.
    static func request(prefix: String) -> ClientRequest {
        ClientRequest(requestID: "\(prefix)-\(UUID().uuidString.prefix(12))", program: "demo-imprint", cardID: "pm_\(UUID().uuidString.prefix(10))",
                      last4: "4242", handshake: .google(wallet: .googleWallet, walletID: Crypto.hex(Crypto.randomBytes(8)),
                                                        deviceID: Crypto.hex(Crypto.randomBytes(6)), opcRequested: false))
    }
}

/// Latencies (ms) and decrypted answers of one client process, from many tasks.
private final class Samples: Sendable {
    private let state = Mutex<(latencies: [Double], decrypted: Int)>(([], 0))
    func add(_ ms: Double, decrypted: Bool) { state.withLock { $0.latencies.append(ms); if decrypted { $0.decrypted += 1 } } }
    var values: ([Double], Int) { state.withLock { ($0.latencies, $0.decrypted) } }
}
