import Contract
import Foundation
import Kafka
import Observability
import Pipeline
import Recovery
import Simulator

/// Options of `provisioner demo`.
public struct DemoOptions: Sendable {
    /// Requests in the mix (at least the fixed special cases).
    public var total = 300
    /// Workers in the consumer group (in this process).
    public var workers = 2
    /// Partitions per topic.
    public var partitions = 6
    /// Give up after this long.
    public var timeoutSeconds = 60
    /// Stream worker logs at this level to stderr (nil: do not print them; count warnings and errors for the summary).
    public var logLevel: LogLevel?
    /// Creates the defaults.
    public init() {}
}

/// What the demo found: the rendered summary, the same as JSON, and whether every request met
/// its expectation.
public struct DemoReport: Sendable {
    /// Aligned tables for a terminal.
    public var text: String
    /// The same figures as JSON.
    public var json: String
    /// Every request got its expected final result or dead letter, and no result came late.
    public var succeeded: Bool
}

/// Runs the demo: embedded broker, simulator and workers, the mixed load, follow-up payment
/// actions, live progress, and a self-checked summary.
public enum DemoRun {
    /// Runs it; `progress` receives one status line about every half second.
    public static func run(_ options: DemoOptions, progress: @escaping (String) -> Void) throws -> DemoReport {
        let started = Timestamps.nowMs()
        let stack = try EmbeddedStack(brokers: 1, partitions: options.partitions)
        defer { stack.stop() }
        let logs = DemoWarningCounter()
        let handler: any LogHandler = options.logLevel == nil ? logs : JSONLineLogHandler()
        var registries: [MetricsRegistry] = []
        // Payment actions are accepted only from a signing program: the demo's Worldpay program
        // signs with a key of this run.
        let signing = Sensitive("demo-worldpay-signing-" + Crypto.hex(Crypto.randomBytes(16)))
        let signer = Signer(signer: RequestSigner(secret: signing), partitions: options.partitions)
        for index in 1...max(1, options.workers) {
            let configuration = try stack.configuration(groupID: "provisioner-demo", workerID: "demo-worker-\(index)") {
                $0.programs["demo-worldpay"]?.requestSigningSecret = .environment(Self.signingVariable)
            }
            let registry = MetricsRegistry()
            registries.append(registry)
            try stack.startWorker(configuration, extraEnvironment: [Self.signingVariable: signing.revealed], logger: Logger(label: "worker-\(index)", minimumLevel: options.logLevel ?? .notice, handler: handler),
                                  metrics: registry)
        }
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: stack.partitions)
        defer { collector.stop() }
        let factory = try RequestFactory(devices: 4)
        progress("embedded broker on \(stack.bootstrapServers), simulator on \(stack.simulatorURL); waiting for the consumer group to form")
        guard stack.waitForGroup(timeoutMs: 30_000) else {
            throw DemoError(message: "the workers did not get their partitions within 30 s")
        }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        progress("group formed; warming up (one request per partition: first fetches reset offsets)")
        try EmbeddedStack.warmUp(partitions: stack.partitions, topic: stack.topics.requests, factory: factory, producer: producer,
                                 collector: collector)
        var cases = try DemoPlan.make(total: options.total, factory: factory)
        var producedAt: [String: Int64] = [:]
        for demoCase in cases {
            try produce(demoCase.request, producer: producer, topic: stack.topics.requests, signer: signer)
            producedAt[demoCase.request.requestID] = producedAt[demoCase.request.requestID] ?? Timestamps.nowMs()
        }
        progress("produced \(cases.count) requests to \(stack.topics.requests) (\(options.workers) workers, \(options.partitions) partitions)")

        var actionsSent = false
        let deadline = started + Int64(options.timeoutSeconds) * 1000
        var lastProgress: Int64 = 0
        var snapshot = collector.snapshot
        while Timestamps.nowMs() < deadline {
            snapshot = collector.snapshot
            if !actionsSent, let actions = try paymentActions(cases, snapshot: snapshot, factory: factory) {
                for action in actions {
                    try produce(action.request, producer: producer, topic: stack.topics.requests, signer: signer)
                    producedAt[action.request.requestID] = Timestamps.nowMs()
                }
                cases += actions
                actionsSent = true
                progress("authorized payments seen: sent \(actions.count) follow-up actions (settle, partial settle, cancel)")
            }
            let settled = cases.filter { isSettled($0, snapshot) }.count
            if Timestamps.nowMs() - lastProgress >= 500 {
                lastProgress = Timestamps.nowMs()
                let interim = snapshot.results.values.filter { !$0.contains { $0.result.isFinal } }.count
                progress(String(format: "%5.1fs  requests %d · answered %d · awaiting reconciliation %d · dead letters %d",
                                Double(Timestamps.nowMs() - started) / 1000, cases.count, settled, interim, snapshot.deadLetters.count))
            }
            if actionsSent && settled == cases.count { break }
            usleep(50_000)
        }
        usleep(300_000)
        snapshot = collector.snapshot
        return summarize(cases, snapshot: snapshot, producedAt: producedAt, registries: registries, logs: logs, options: options,
                         elapsedMs: Timestamps.nowMs() - started)
    }

    /// The variable the demo workers read the Worldpay program's signing key from.
    static let signingVariable = "DEMO_WORLDPAY_SIGNING"

    /// The demo's producer holds the Worldpay program's key and signs everything it sends: where a
    /// program signs, a record naming no program the workers serve (an unknown program, a value
    /// that is not JSON) is answered only when a key they hold signed it; other programs' workers
    /// ignore the signature.
    struct Signer {
        let signer: RequestSigner
        let partitions: Int

        func prepare(_ request: GeneratedRequest, topic: String) -> KafkaOutgoingMessage {
            signer.signed(KafkaOutgoingMessage(topic: topic, key: request.key, value: request.value), partitionCount: partitions,
                          nowMs: Timestamps.nowMs())
        }
    }

    private static func produce(_ request: GeneratedRequest, producer: KafkaProducer, topic: String, signer: Signer) throws {
        let message = signer.prepare(request, topic: topic)
        while true {
            do {
                try producer.send(message) { _ in }
                return
            } catch where error.code == .queueFull {
                usleep(1_000)
            }
        }
    }

    /// Once three bulk payments are authorized: settle one fully, one partially, cancel one.
    private static func paymentActions(_ cases: [DemoCase], snapshot: ResultCollector.Snapshot,
                                       factory: RequestFactory) throws -> [DemoCase]? {
        let authorized = cases.compactMap { demoCase -> (DemoCase, PaymentLinks)? in
            guard demoCase.label == "worldpay payment", let result = snapshot.final(demoCase.request.requestID),
                  result.status == .authorized, let jwe = result.payload, let key = demoCase.request.replyKey,
                  let plaintext = try? JWE.decrypt(jwe, with: key), let links = try? PaymentLinks.decode(plaintext: plaintext)
            else { return nil }
            return (demoCase, links)
        }
        guard authorized.count >= 3 else {
            return cases.contains { $0.label == "worldpay payment" } ? nil : []
        }
        var actions: [DemoCase] = []
        let plan: [(PaymentActionKind, ResultStatus, Int64?)] = [(.settle, .settled, nil), (.partialSettle, .settled, 100), (.cancel, .cancelled, nil)]
        for ((payment, links), (kind, status, amount)) in zip(authorized, plan) {
            let link = switch kind {
            case .settle: links.settle
            case .partialSettle: links.partialSettle
            case .cancel: links.cancel
            }
            guard let link, let reference = reference(of: payment.request) else { continue }
            let request = factory.paymentAction(program: "demo-worldpay", action: kind, link: link.revealed,
                                                transactionReference: reference, amountMinorUnits: amount)
            actions.append(DemoCase(label: "worldpay \(kind.rawValue) via link", request: request, expectation: .final(status, nil)))
        }
        return actions
    }

    private static func reference(of request: GeneratedRequest) -> String? {
        guard let document = try? JSONParser().parse(request.value) else { return nil }
        return document["payment"]?["transaction_reference"]?.stringValue
    }

    private static func isSettled(_ demoCase: DemoCase, _ snapshot: ResultCollector.Snapshot) -> Bool {
        switch demoCase.expectation {
        case .final: snapshot.final(demoCase.request.requestID) != nil
        case .deadLetter(let code): snapshot.deadLetters.contains { $0.provenance?.code.rawValue == code }
        case .duplicate: snapshot.results[demoCase.request.requestID] != nil
        }
    }
}
