import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Simulator
import Testing
import TestSupport

extension ReliabilityTests {
    /// A worker exporting spans to a real OTLP receiver (`Tests/Interop/otlp_receiver.py`, which
    /// parses each export with `opentelemetry-proto`) handles requests of every issuer, each with
    /// its own `traceparent`: a plain call per issuer, a call retried after a 503 (`-flaky`: two
    /// sends) and a call answered 504 after it was applied (`-timeout-applied`: reconciled by a
    /// state query). Each HTTP request the simulator received carries the request's trace id, its
    /// flags and a fresh parent id, which is the id of an exported issuer span of that trace; the
    /// exports parse as OTLP; the spans of each request hang together (request span under the
    /// incoming parent, its stages under it); no canary of a request or of the environment is in
    /// the exported bytes; nothing was dropped.
    @Test("traces: the issuer receives each call's span id as traceparent; spans reach a real OTLP receiver without a secret")
    func tracesReachTheIssuerAndTheCollector() async throws {
        let receiver = try await OTLPReceiver()
        defer { receiver.stop() }
        let book = CanaryBook()
        let imprintKey = book.mint("ImprintKey", label: "env DEMO_IMPRINT_API_KEY")
        let dcsKey = book.mint("DcsKey", label: "env DEMO_DCS_API_KEY")
        let dcsSecret = book.mint("DcsSecret", label: "env DEMO_DCS_API_SECRET")
        let gnosisToken = book.mint("GnosisToken", label: "env DEMO_GNOSIS_TOKEN")
        let worldpayKey = book.mint("WorldpayKey", label: "env DEMO_WORLDPAY_API_KEY")
        let auditKey = book.mint("AuditKey", label: "env PROVISIONER_AUDIT_KEY", hexLength: 40)
        let profile = SimulatorProfile(programs: [
            SimulatorProgram(name: "demo-imprint", issuer: .imprint, apiKey: Sensitive(imprintKey)),
            SimulatorProgram(name: "demo-dcs", issuer: .dcs, apiKey: Sensitive(dcsKey), apiSecret: Sensitive(dcsSecret)),
            SimulatorProgram(name: "demo-gnosis", issuer: .gnosis, apiKey: Sensitive(gnosisToken)),
            SimulatorProgram(name: "demo-worldpay", issuer: .worldpay, apiKey: Sensitive(worldpayKey)),
        ])
        let partitions = 3
        let stack = try EmbeddedStack(brokers: 1, partitions: partitions, profile: profile)
        defer { stack.stop() }
        let environment = ["DEMO_IMPRINT_API_KEY": imprintKey, "DEMO_DCS_API_KEY": dcsKey, "DEMO_DCS_API_SECRET": dcsSecret,
                           "DEMO_GNOSIS_TOKEN": gnosisToken, "DEMO_WORLDPAY_API_KEY": worldpayKey, "PROVISIONER_AUDIT_KEY": auditKey]
        let registry = MetricsRegistry()
        let configuration = try stack.configuration(groupID: UniqueName.make("traces"), workerID: "traces-w1") {
            $0.tracing = WorkerConfiguration.TracingSettings(endpoint: receiver.endpoint)
            $0.reconcileTiersMs = [300, 1_000, 5_000]
        }
        try stack.startWorker(configuration, extraEnvironment: environment,
                              logger: Logger(label: "worker", minimumLevel: .error, handler: CapturingLogHandler()), metrics: registry)
        try #require(stack.waitForGroup(), "the worker did not get the partitions")
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
        defer { collector.stop() }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 2)

        // The requests, each with canaries in its secret fields and its own trace.
        func planted(_ generated: GeneratedRequest, _ path: String) -> GeneratedRequest {
            var document = JSONValue.parsed(generated.value)
            document = document.setting("card.user_id", .string("u_" + book.mint("User", label: "\(path) card.user_id")))
            if let apple = document["apple"] {
                for (index, certificate) in (apple["certificates"]?.arrayValue ?? []).enumerated() {
                    if let text = certificate.stringValue { book.register("\(path) apple.certificates[\(index)]", text) }
                }
                document = document.setting("apple.nonce", .string(book.opaqueBase64("Nonce", label: "\(path) apple.nonce", padding: 16)))
                document = document.setting("apple.nonce_signature", .string(book.opaqueBase64("Sig", label: "\(path) apple.nonce_signature", padding: 48)))
            }
            if document["google"] != nil {
                document = document.setting("google.wallet_id", .string(book.mint("W", label: "\(path) google.wallet_id")))
                document = document.setting("google.device_id", .string(book.mint("D", label: "\(path) google.device_id")))
            }
            if document["payment"] != nil {
                let token = SimulatedDevice.applePayToken(transactionID: book.mint("Txn", label: "\(path) payment.wallet_token"))
                book.register("\(path) payment.wallet_token (whole)", token)
                document = document.setting("payment.wallet_token", .string(token))
            }
            var planted = generated
            planted.value = document.bytes
            return planted
        }
        func card(_ path: String, _ suffix: String = "") -> String { "pm_" + book.mint("Card", label: "\(path) card.id") + suffix }
        struct Case {
            var path: String
            var request: GeneratedRequest
            var traceID = Crypto.hex(Crypto.randomBytes(16))
            var parentID = Crypto.hex(Crypto.randomBytes(8))
            /// HTTP requests the issuer gets at least: calls, retries, state queries.
            var sends: Int
        }
        var cases: [Case] = []
        var path = "imprint apple"
        cases.append(Case(path: path, request: planted(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(path),
                                                                           requestID: factory.requestID("trace")), path), sends: 1))
        path = "dcs google_wallet"
        cases.append(Case(path: path, request: planted(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(path),
                                                                           requestID: factory.requestID("trace"), opcRequested: false), path), sends: 1))
        path = "gnosis apple"
        cases.append(Case(path: path, request: planted(try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: card(path),
                                                                           requestID: factory.requestID("trace")), path), sends: 1))
        path = "worldpay payment"
        cases.append(Case(path: path, request: planted(factory.payment(program: "demo-worldpay", transactionReference: "ref-\(factory.requestID())",
                                                                       requestID: factory.requestID("trace")), path), sends: 1))
        path = "imprint retried after 503"
        cases.append(Case(path: path, request: planted(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card(path, "-flaky"),
                                                                           requestID: factory.requestID("trace")), path), sends: 2))
        path = "imprint reconciled after 504"
        cases.append(Case(path: path, request: planted(try factory.provision(program: "demo-imprint", wallet: .googlePay,
                                                                           cardID: card(path, "-timeout-applied"),
                                                                           requestID: factory.requestID("trace")), path), sends: 2))
        for item in cases {
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: item.request.key, value: item.request.value,
                                                   headers: [KafkaHeader(key: "traceparent", string: "00-\(item.traceID)-\(item.parentID)-01")])) { _ in }
        }
        #expect(producer.flush(timeoutMs: 30_000))
        let ids = cases.map(\.request.requestID)
        let answered = await DedicatedThread.run { collector.wait(timeoutMs: 90_000) { snapshot in ids.allSatisfy { snapshot.final($0) != nil } } }
        try #require(answered, "not every request got a final: \(ids.filter { collector.snapshot.final($0) == nil })")
        let snapshot = collector.snapshot

        // Every request's spans reach the receiver (exported within a second of being recorded).
        let exported = await Waiting.until(timeoutMs: 30_000) {
            let spans = receiver.spans
            return cases.allSatisfy { item in spans.contains { $0.traceID == item.traceID && $0.name == "provisioning request" } }
                && cases.allSatisfy { item in spans.filter { $0.traceID == item.traceID && $0.kind == 3 }.count >= item.sends }
        }
        let spans = receiver.spans
        #expect(exported, "spans missing at the receiver: \(spans.map { "\($0.traceID.prefix(8)) \($0.name)" })")
        #expect(receiver.errors.isEmpty, "exports the OTLP receiver refused: \(receiver.errors)")

        // The issuer's side: every HTTP request of a traced request names one exported issuer span.
        let received = stack.simulator.receivedTraces
        var sentParents: [String] = []
        for item in cases {
            let lines = received.compactMap(\.traceparent).filter { $0.contains(item.traceID) }
            #expect(lines.count >= item.sends, "\(item.path): \(lines.count) issuer requests carried the trace, expected \(item.sends)")
            let requestSpan = spans.first { $0.traceID == item.traceID && $0.name == "provisioning request" }
            #expect(requestSpan?.parentSpanID == item.parentID, "\(item.path): the request span is a child of the incoming traceparent")
            #expect(requestSpan?.attributes["request_id"] == item.request.requestID)
            #expect(requestSpan?.attributes["status"] == snapshot.results[item.request.requestID]?.first?.result.status.rawValue,
                    "\(item.path): the request span names the first published status")
            for line in lines {
                let parts = line.split(separator: "-").map(String.init)
                #expect(parts.count == 4 && parts[0] == "00" && parts[1] == item.traceID && parts[3] == "01", "\(item.path): \(line)")
                guard parts.count == 4 else { continue }
                #expect(parts[2] != item.parentID, "\(item.path): the issuer gets a child span id, not the incoming parent id")
                sentParents.append(parts[2])
                let span = spans.first { $0.traceID == item.traceID && $0.spanID == parts[2] }
                #expect(span?.kind == 3 && (span?.name == "issuer call" || span?.name == "issuer state query"),
                        "\(item.path): no exported issuer span has the id the issuer received (\(parts[2]))")
                if span?.name == "issuer call" {
                    #expect(span?.parentSpanID == requestSpan?.spanID, "\(item.path): an issuer call is a child of its request span")
                }
                #expect(span?.attributes["program"] == item.request.program && span?.attributes["http.response.status_code"] != nil)
            }
            let stages = Set(spans.filter { $0.traceID == item.traceID && $0.parentSpanID == requestSpan?.spanID }.map(\.name))
            #expect(stages.isSuperset(of: ["queue wait", "fencing", "issuer call", "publish"]), "\(item.path): stages \(stages.sorted())")
        }
        #expect(Set(sentParents).count == sentParents.count, "every send has its own span id")
        #expect(cases.contains { item in spans.contains { $0.traceID == item.traceID && $0.name == "issuer state query" } },
                "the reconciliation's state query is traced")

        // Not one canary in what was exported; nothing dropped.
        let raw = receiver.rawBytes
        #expect(!raw.isEmpty)
        let leaks = CanaryBook.find(book.all, in: [("exported spans", raw)])
        #expect(leaks.isEmpty, "secrets in exported spans: \(leaks.map(\.label))")
        #expect((registry.value("provisioner_spans_dropped_total") ?? -1) == 0)
        #expect((registry.value("provisioner_spans_exported_total") ?? 0) >= Double(spans.count))
    }
}
