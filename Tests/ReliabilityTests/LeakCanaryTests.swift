import Contract
import Foundation
import Harness
import HTTP
import Kafka
import Observability
import Pipeline
import Recovery
import Simulator
import Testing
import TestSupport

extension ReliabilityTests {
    /// Unique canaries in every secret a request carries (nonce bytes, nonce signature, Google wallet,
    /// device and session ids, card and user ids, the payment wallet token) and in every secret of the
    /// workers' environment (issuer API keys, the DCS secret, the audit pseudonym key, a request-signing
    /// secret). Requests take every path: success, rejection, expiry, issuer errors, reconciliation,
    /// dead letters, parked replays. Everything the system writes — results (outside the JWE), audit,
    /// dead-letter and parked headers, markers, reconciliation jobs, logs of an in-process and of a
    /// child-process worker, `/metrics` — must hold none of them. Each payload must be a JWE to the
    /// request's reply key whose plaintext holds the issuer's values.
    @Test("leak canaries: no secret of any request or of the environment appears in any output")
    func leakCanaries() async throws {
        let book = CanaryBook()
        // Secrets of the environment, known to the simulator under the demo program names.
        let imprintKey = book.mint("ImprintKey", label: "env DEMO_IMPRINT_API_KEY")
        let dcsKey = book.mint("DcsKey", label: "env DEMO_DCS_API_KEY")
        let dcsSecret = book.mint("DcsSecret", label: "env DEMO_DCS_API_SECRET")
        let gnosisToken = book.mint("GnosisToken", label: "env DEMO_GNOSIS_TOKEN")
        let worldpayKey = book.mint("WorldpayKey", label: "env DEMO_WORLDPAY_API_KEY")
        let auditKey = book.mint("AuditKey", label: "env PROVISIONER_AUDIT_KEY", hexLength: 40)  // 52 bytes: keys under 32 are refused
        let signingSecret = book.mint("Signing", label: "env RELIABILITY_SIGNING_SECRET", hexLength: 40)  // signing keys under 32 bytes are refused
        let replaySigningSecret = book.mint("ReplaySigning", label: "env RELIABILITY_REPLAY_SIGNING_SECRET", hexLength: 40)
        // Named keys beside the unnamed ones: the current replay key (replays are signed with it, dead
        // letters sealed and named by it) and the current pseudonym key (events carry both pseudonyms).
        let replayKey2 = book.mint("ReplayKeyTwo", label: "env RELIABILITY_REPLAY_KEY_2", hexLength: 40)
        let auditKey2 = book.mint("AuditKeyTwo", label: "env RELIABILITY_AUDIT_KEY_2", hexLength: 40)
        let profile = SimulatorProfile(programs: [
            SimulatorProgram(name: "demo-imprint", issuer: .imprint, apiKey: Sensitive(imprintKey)),
            SimulatorProgram(name: "demo-dcs", issuer: .dcs, apiKey: Sensitive(dcsKey), apiSecret: Sensitive(dcsSecret)),
            SimulatorProgram(name: "demo-gnosis", issuer: .gnosis, apiKey: Sensitive(gnosisToken)),
            SimulatorProgram(name: "demo-worldpay", issuer: .worldpay, apiKey: Sensitive(worldpayKey)),
        ])
        let partitions = 6
        let stack = try EmbeddedStack(brokers: 1, partitions: partitions, profile: profile)
        defer { stack.stop() }
        var environment = stack.environment
        environment["DEMO_IMPRINT_API_KEY"] = imprintKey
        environment["DEMO_DCS_API_KEY"] = dcsKey
        environment["DEMO_DCS_API_SECRET"] = dcsSecret
        environment["DEMO_GNOSIS_TOKEN"] = gnosisToken
        environment["DEMO_WORLDPAY_API_KEY"] = worldpayKey
        environment["PROVISIONER_AUDIT_KEY"] = auditKey
        environment["RELIABILITY_SIGNING_SECRET"] = signingSecret
        environment["RELIABILITY_REPLAY_SIGNING_SECRET"] = replaySigningSecret
        environment["RELIABILITY_REPLAY_KEY_2"] = replayKey2
        environment["RELIABILITY_AUDIT_KEY_2"] = auditKey2
        let group = UniqueName.make("reliability-leaks")

        // Both workers export their spans to a real OTLP receiver: the exported bytes are scanned too.
        let receiver = try await OTLPReceiver()
        defer { receiver.stop() }
        // Worker 1 in this process (every log record captured at debug level).
        let logs = CapturingLogHandler()
        let registry = MetricsRegistry()
        let configuration = try stack.configuration(groupID: group, workerID: "leaks-w1") {
            $0.programs["demo-gnosis"]?.requestSigningSecret = .environment("RELIABILITY_SIGNING_SECRET")
            $0.replaySigningSecret = .environment("RELIABILITY_REPLAY_SIGNING_SECRET")
            $0.tracing = WorkerConfiguration.TracingSettings(endpoint: receiver.endpoint)
            $0.replayKeys = [RequestSigningKey(id: "r2", secret: .environment("RELIABILITY_REPLAY_KEY_2"), keyPath: "dlq.replay_keys[0].secret_env")]
            $0.pseudonymKeys = [RequestSigningKey(id: "a2", secret: .environment("RELIABILITY_AUDIT_KEY_2"), keyPath: "audit.pseudonym_keys[0].secret_env")]
        }
        let local = try Worker(configuration: configuration, environment: environment,
                               logger: Logger(label: "worker", minimumLevel: .debug, handler: logs), metrics: registry)
        try local.start()
        defer {
            local.shutdown()
            local.waitUntilStopped()
        }
        // Worker 2 as a `provisioner worker` process (its stderr at debug level).
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("reliability-leaks"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let childPort = try #require(FreePort.pick())
        let configText = JSONValue.parsed(Array(stack.configurationFileText(groupID: group).utf8))
            .setting("programs.demo-gnosis.request_signing", .object(["secret_env": .string("RELIABILITY_SIGNING_SECRET")]))
            .setting("dlq", .object(["replay_signing_secret_env": .string("RELIABILITY_REPLAY_SIGNING_SECRET"),
                                     "replay_keys": .array([.object(["id": .string("r2"), "secret_env": .string("RELIABILITY_REPLAY_KEY_2")])])]))
            .setting("audit", .object(["pseudonym_key_env": .string("PROVISIONER_AUDIT_KEY"),
                                       "pseudonym_keys": .array([.object(["id": .string("a2"), "secret_env": .string("RELIABILITY_AUDIT_KEY_2")])])]))
            .setting("tracing", .object(["otlp_endpoint": .string(receiver.endpoint)]))
        let configPath = directory.appendingPathComponent("leaks-w2.json").path
        try Data(configText.bytes).write(to: URL(fileURLWithPath: configPath))
        var childEnvironment = environment
        childEnvironment["PROVISIONER_WORKER_ID"] = "leaks-w2"
        childEnvironment["PROVISIONER_LOG__LEVEL"] = "debug"
        childEnvironment["PROVISIONER_HTTP__LISTEN"] = "127.0.0.1:\(childPort)"
        let child = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                     arguments: ["worker", "--config", configPath, "--exit-with-parent"], environment: childEnvironment)
        defer { child.kill() }
        let childView = ChildWorkerLog(process: child)
        let formed = await Waiting.until(timeoutMs: 60_000) {
            let mine = local.assignedPartitionCount
            let theirs = childView.ownedPartitions.count
            return mine > 0 && theirs > 0 && mine + theirs == partitions
        }
        try #require(formed, "the two workers did not share the partitions")

        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
        defer { collector.stop() }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 2)
        try EmbeddedStack.warmUp(partitions: partitions, topic: stack.topics.requests, factory: factory, producer: producer,
                                 collector: collector, timeoutMs: 60_000)

        // MARK: The requests, one per path.
        struct Case {
            var path: String
            var request: GeneratedRequest
            var headers: [KafkaHeader] = []
            var partition: Int32?
            /// Final statuses accepted; empty: a dead letter (`parked`: on the parked topic) and no result.
            var statuses: Set<ResultStatus>
            var parked = false
            var appleExpiredDeadLetter = false
            var canaries: [String] = []
        }
        var cases: [Case] = []
        var caseNumber = 0
        func card(_ path: String, suffix: String = "") -> String {
            "pm_" + book.mint("Card", label: "\(path) card.id") + suffix
        }
        /// Plants canaries in a generated request's secret fields; returns the new request and the labels' values.
        func plant(_ generated: GeneratedRequest, _ path: String, deviceSuffix: String = "", walletIDLength: Int = 12,
                   edit: (JSONValue) -> JSONValue = { $0 }) -> GeneratedRequest {
            var document = JSONValue.parsed(generated.value)
            document = document.setting("card.user_id", .string("u_" + book.mint("User", label: "\(path) card.user_id")))
            if let apple = document["apple"] {
                for (index, certificate) in (apple["certificates"]?.arrayValue ?? []).enumerated() {
                    if let text = certificate.stringValue { book.register("\(path) apple.certificates[\(index)]", text) }
                }
                document = document.setting("apple.nonce", .string(book.opaqueBase64("Nonce", label: "\(path) apple.nonce", padding: 16)))
                document = document.setting("apple.nonce_signature",
                                            .string(book.opaqueBase64("Sig", label: "\(path) apple.nonce_signature", padding: 48)))
            }
            if document["google"] != nil {
                document = document.setting("google.wallet_id", .string(book.mint("W", label: "\(path) google.wallet_id", hexLength: walletIDLength)))
                document = document.setting("google.device_id", .string(book.mint("D", label: "\(path) google.device_id") + deviceSuffix))
                if document["google"]?["server_session_id"] != nil {
                    document = document.setting("google.server_session_id", .string(book.mint("Sess", label: "\(path) google.server_session_id")))
                }
            }
            if document["payment"] != nil {
                let transaction = book.mint("Txn", label: "\(path) payment.wallet_token")
                let token = SimulatedDevice.applePayToken(transactionID: transaction)
                book.register("\(path) payment.wallet_token (whole)", token)
                document = document.setting("payment.wallet_token", .string(token))
            }
            var planted = generated
            planted.value = edit(document).bytes
            return planted
        }
        func add(_ path: String, _ request: GeneratedRequest, _ statuses: Set<ResultStatus>, headers: [KafkaHeader] = [],
                 partition: Int32? = nil, parked: Bool = false, appleExpiredDeadLetter: Bool = false, signed: Bool? = nil) {
            var headers = headers
            var partition = partition
            if signed ?? (request.program == "demo-gnosis") {
                // A replay of a signed program is signed with the replay key, as `dlq replay` does;
                // a signed record names its partition (murmur2 of its key unless the case sets one).
                let isReplay = headers.contains { $0.key == "x-replay-of" }
                let chosen = partition ?? RequestPartitioner.partition(key: request.key, count: partitions)
                partition = chosen
                headers = RequestSigner(secret: Sensitive(isReplay ? replayKey2 : signingSecret), keyID: isReplay ? "r2" : nil)
                    .signed(key: request.key, value: request.value, headers: headers, partition: chosen, nowMs: Timestamps.nowMs())
            }
            caseNumber += 1
            cases.append(Case(path: path, request: request, headers: headers, partition: partition, statuses: statuses, parked: parked,
                              appleExpiredDeadLetter: appleExpiredDeadLetter))
        }
        func id(_ path: String) -> String { factory.requestID("leak") }
        let now = Timestamps.nowMs()

        // Success, every issuer and wallet.
        var p = "success imprint apple"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p)), p), [.provisioned])
        p = "success imprint google_wallet"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card(p), requestID: id(p)), p), [.provisioned])
        p = "success imprint google_pay"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card(p), requestID: id(p)), p), [.provisioned])
        p = "success dcs apple"
        add(p, plant(try factory.provision(program: "demo-dcs", wallet: .applePay, cardID: card(p), requestID: id(p)), p), [.provisioned])
        p = "success dcs google_wallet"
        add(p, plant(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(p), requestID: id(p), opcRequested: false), p),
            [.provisioned])
        p = "success gnosis apple"
        add(p, plant(try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: card(p), requestID: id(p)), p), [.provisioned])
        p = "success worldpay payment"
        add(p, plant(factory.payment(program: "demo-worldpay", transactionReference: "ref-\(factory.requestID())", requestID: id(p)), p),
            [.authorized])
        p = "replayed request (x-replay-of)"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card(p), requestID: id(p)), p), [.provisioned],
            headers: [KafkaHeader(key: "x-replay-of", string: "provisioning.dlq:0:0")])

        // Rejections: validation, the decoder, unknown program, signatures, a reused nonce.
        p = "rejected raw nonce_signature"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p)), p) {
            $0.setting("apple.nonce_signature", .string(book.mint("RawSig", label: "rejected raw nonce_signature (raw text)")))
        }, [.rejected])
        p = "rejected dcs wallet_id too long"
        add(p, plant(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(p), requestID: id(p), opcRequested: false),
                     p, walletIDLength: 40), [.rejected])
        p = "rejected dcs google OPC"
        add(p, plant(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(p), requestID: id(p)), p), [.rejected])
        p = "rejected bad last4"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p)), p) {
            $0.setting("card.last4", .string("4x42"))
        }, [.rejected])
        p = "rejected unknown program"
        // Signed by a key the worker holds: a worker that enforces signatures answers only attributable messages.
        add(p, plant(try factory.provision(program: "no-such-program", wallet: .googleWallet, cardID: card(p), requestID: id(p)), p), [.rejected],
            signed: true)
        // Unauthentic messages get no answer (CONTRACT section 11): a dead letter `unauthenticated`.
        p = "dead letter unsigned"
        add(p, plant(try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: card(p), requestID: id(p)), p), [],
            signed: false)
        p = "dead letter bad signature"
        add(p, plant(try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: card(p), requestID: id(p)), p), [],
            headers: [KafkaHeader(key: RequestSignature.header, string: RequestSignature.signV1(secret: Sensitive("wrong"), value: [1]))],
            signed: false)
        p = "rejected reused nonce"
        let first = plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p)), p)
        add(p + " (first)", first, [.provisioned], partition: 2)
        var reused = first
        reused.requestID = id(p)
        reused.value = JSONValue.parsed(first.value).setting("request_id", .string(reused.requestID)).bytes
        add(p, reused, [.rejected], partition: 2)

        // Expiry before the call.
        p = "expired apple"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p), startedAtMs: now - 25_000),
                     p), [.expired])
        p = "expired google deadline"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card(p), requestID: id(p),
                                           deadlineMs: now - 1_000), p), [.expired])

        // Issuer errors.
        p = "issuer missing card"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p, suffix: "-missing"), requestID: id(p)), p),
            [.rejected])
        p = "issuer inactive card"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card(p, suffix: "-inactive"), requestID: id(p)), p),
            [.rejected])
        p = "issuer already provisioned"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card(p, suffix: "-provisioned"), requestID: id(p)), p),
            [.alreadyProvisioned])
        p = "issuer flaky (503, retried)"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card(p, suffix: "-flaky"), requestID: id(p)), p),
            [.provisioned])
        p = "issuer device ineligible"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card(p), requestID: id(p)), p,
                     deviceSuffix: "-ineligible"), [.rejected])
        p = "issuer dcs missing card"
        add(p, plant(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(p, suffix: "-missing"), requestID: id(p),
                                           opcRequested: false), p), [.rejected])
        p = "issuer gnosis inactive card"
        add(p, plant(try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: card(p, suffix: "-inactive"), requestID: id(p)), p),
            [.rejected])
        p = "issuer worldpay refused"
        add(p, plant(factory.payment(program: "demo-worldpay", transactionReference: "ref-\(factory.requestID())-refused", requestID: id(p)), p),
            [.refused])

        // Reconciliation.
        p = "reconcile imprint applied"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p, suffix: "-timeout-applied"),
                                           requestID: id(p)), p), [.provisioned])
        p = "reconcile imprint unapplied"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card(p, suffix: "-timeout-unapplied"),
                                           requestID: id(p)), p), [.notProvisioned])
        p = "reconcile dcs (no state API)"
        add(p, plant(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(p, suffix: "-timeout-applied"),
                                           requestID: id(p), opcRequested: false), p), [.indeterminate])
        p = "reconcile worldpay payment"
        add(p, plant(factory.payment(program: "demo-worldpay", transactionReference: "ref-\(factory.requestID())-timeout-applied", requestID: id(p)),
                     p), [.authorized])

        // Dead letters and parked replays.
        func version2(_ value: JSONValue) -> JSONValue { value.setting("version", .integer(2)) }
        p = "dead letter expired apple (unknown version)"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p), startedAtMs: now - 30_000),
                     p, edit: version2), [], appleExpiredDeadLetter: true)
        p = "dead letter google (unknown version)"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .googleWallet, cardID: card(p), requestID: id(p)), p, edit: version2), [])
        p = "dead letter invalid utf-8"
        var invalid = plant(try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: card(p), requestID: id(p)), p)
        invalid.value = [UInt8(ascii: "{"), 0xFF] + invalid.value.dropFirst()
        add(p, invalid, [])
        p = "dead letter over-size apple"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p), startedAtMs: now - 30_000),
                     p) { $0.setting("padding", .string(String(repeating: "p", count: 70_000))) }, [], appleExpiredDeadLetter: true)
        p = "parked expired apple (replay failed again)"
        add(p, plant(try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: card(p), requestID: id(p), startedAtMs: now - 30_000),
                     p, edit: version2), [], headers: [KafkaHeader(key: "x-replay-of", string: "provisioning.dlq:1:7")], parked: true,
            appleExpiredDeadLetter: true)
        p = "parked google (replay failed again)"
        add(p, plant(try factory.provision(program: "demo-gnosis", wallet: .googleWallet, cardID: card(p), requestID: id(p)), p, edit: version2), [],
            headers: [KafkaHeader(key: "x-replay-of", string: "provisioning.dlq:2:9")], parked: true)

        for item in cases {
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: item.request.key, value: item.request.value,
                                                   headers: item.headers + [KafkaHeader(key: "traceparent", string:
                                                       "00-\(Crypto.hex(Crypto.randomBytes(16)))-\(Crypto.hex(Crypto.randomBytes(8)))-01")],
                                                   partition: item.partition)) { _ in }
        }
        #expect(producer.flush(timeoutMs: 30_000))

        // MARK: Wait for every answer and for every output to be acknowledged.
        let answeredIDs = cases.filter { !$0.statuses.isEmpty }.map(\.request.requestID)
        let deadCount = cases.filter { $0.statuses.isEmpty && !$0.parked }.count
        let parkedCount = cases.filter(\.parked).count
        let topics = stack.topics
        let answered = await DedicatedThread.run {
            collector.wait(timeoutMs: 90_000) { snapshot in
                answeredIDs.allSatisfy { snapshot.final($0) != nil }
                    && snapshot.deadLetters.filter { $0.topic == topics.deadLetters }.count >= deadCount
                    && snapshot.deadLetters.filter { $0.topic == topics.parked }.count >= parkedCount
            }
        }
        let snapshot = collector.snapshot
        #expect(answered, "not every request was answered: \(answeredIDs.filter { snapshot.final($0) == nil })")
        // Every request and every reconciliation job finished (committed to the end of its topic).
        for (consumerGroup, topic) in [(group, topics.requests), (group + ".reconcile", topics.reconcile)] {
            let progress = try await KafkaChecks.waitForCommitsAtEnd(bootstrapServers: stack.bootstrapServers, group: consumerGroup, topic: topic,
                                                                     partitions: partitions, timeoutMs: 60_000)
            let behind = progress.filter { $0.value.committed != $0.value.end && $0.value.end > 0 }
            #expect(behind.isEmpty, "\(consumerGroup) did not finish \(topic): \(behind.map { "\($0.key): \($0.value.committed)/\($0.value.end)" })")
        }

        // Each path ended as intended (so each path really ran).
        var wrongPaths: [String] = []
        for item in cases where !item.statuses.isEmpty {
            let final = snapshot.final(item.request.requestID)
            if final.map({ !item.statuses.contains($0.status) }) ?? true {
                wrongPaths.append("\(item.path): \(final.map { "\($0.status.rawValue)/\($0.code?.rawValue ?? "-")" } ?? "no final result")")
            }
        }
        #expect(wrongPaths.isEmpty, "paths that did not end as intended: \(wrongPaths)")

        // MARK: Payloads: a JWE to reply.jwk holding the issuer's values.
        var payloadsChecked = 0
        var payloadProblems: [String] = []
        for item in cases {
            guard let final = snapshot.final(item.request.requestID), final.status == .provisioned, final.nextAction == .addToWallet else { continue }
            do {
                let jwe = try #require(final.payload, "\(item.path): provisioned without a payload")
                let header = JSONValue.parsed(Crypto.base64URLDecode(String(jwe.split(separator: ".")[0])) ?? [])
                guard header["alg"]?.stringValue == "ECDH-ES", header["enc"]?.stringValue == "A256GCM", header["epk"] != nil,
                      jwe.split(separator: ".", omittingEmptySubsequences: false).count == 5 else {
                    payloadProblems.append("\(item.path): not an ECDH-ES/A256GCM compact JWE")
                    continue
                }
                let plaintext = try JWE.decrypt(jwe, with: try #require(item.request.replyKey))
                switch try ProvisioningPayload.decode(plaintext: plaintext, wallet: item.request.wallet) {
                case .apple(_, let encrypted, let ephemeral):
                    let pass = try ApplePassDecryptor.decryptJSON(encryptedPassData: encrypted.revealed, ephemeralPublicKey: ephemeral.revealed,
                                                                  leafPrivateKey: try #require(item.request.appleLeafKey))
                    if pass["primaryAccountSuffix"]?.stringValue.flatMap(CardLast4.init) == nil {
                        payloadProblems.append("\(item.path): the pass data holds no card suffix")
                    }
                case .googleWallet(let card, let opc):
                    let requested = JSONValue.parsed(item.request.value)["google"]?["google_opc_requested"]?.boolValue ?? false
                    if card.revealed.isEmpty || (requested && opc == nil) { payloadProblems.append("\(item.path): incomplete Google Wallet payload") }
                case .googlePay(let card, let network, _, _):
                    if card.revealed.isEmpty || network == nil { payloadProblems.append("\(item.path): incomplete Google Pay payload") }
                }
                payloadsChecked += 1
            } catch {
                payloadProblems.append("\(item.path): \(error)")
            }
        }
        #expect(payloadProblems.isEmpty, "\(payloadProblems)")
        #expect(payloadsChecked >= 8, "only \(payloadsChecked) payloads were checked")

        // MARK: Collect everything the system wrote.
        // First what only a running worker can show (its HTTP endpoints); then both workers stop, and
        // only then are the topics read: with no writer left, every output (audit, markers,
        // reconciliation jobs written after a result) is complete, not a snapshot of it.
        var sources: [(name: String, blob: [UInt8])] = []
        let http = HTTPClient()
        defer { http.shutdown() }
        var metricsBodies = 0
        for endpoint in ["/metrics", "/healthz", "/readyz"] {
            if case .success(let response) = await http.execute(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:\(childPort)\(endpoint)",
                                                                                    timeoutMs: 5_000)) {
                sources.append(("worker \(endpoint) (child process, over HTTP)", response.body))
                if endpoint == "/metrics" && response.status == 200 && !response.body.isEmpty { metricsBodies += 1 }
            }
        }
        #expect(metricsBodies == 1, "the child worker's /metrics could not be read")
        #expect(sources.count == 3, "not every endpoint of the child worker answered: \(sources.map(\.name))")
        local.shutdown()
        local.waitUntilStopped()
        child.terminate()
        let childExit = try? await child.waitForExit(timeout: .seconds(30))
        #expect(childExit == .exited(0), "the child worker did not stop cleanly: \(String(describing: childExit))")
        let localLogs = logs.records.map { record in
            "\(record.level.name) \(record.label) \(record.message) " + record.fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        }
        sources.append(("worker logs (in-process, debug)", Array(localLogs.joined(separator: "\n").utf8)))
        sources.append(("worker metrics (in-process registry)", Array(registry.renderPrometheus().utf8)))
        sources.append(("worker stderr (child process, debug)", Array(child.standardErrorLines.joined(separator: "\n").utf8)))
        // Both workers flushed their span queues as they stopped.
        sources.append(("exported spans (both workers, OTLP/JSON as received)", receiver.rawBytes))
        #expect(receiver.errors.isEmpty, "span exports the OTLP receiver refused: \(receiver.errors)")
        // (The worker writes nothing to stdout, its logs go to stderr: scanned, but it may be empty.)
        let stdout = ("worker stdout (child process)", Array(child.standardOutputLines.joined(separator: "\n").utf8))

        let reader = KafkaTestReader(bootstrapServers: stack.bootstrapServers)
        func blob(_ parts: [[UInt8]]) -> [UInt8] { parts.reduce(into: []) { $0 += $1; $0.append(0x0A) } }
        func headerBytes(_ message: KafkaMessage) -> [[UInt8]] { message.headers.flatMap { [Array($0.key.utf8), $0.value ?? []] } }
        var records = 0
        var scannedBytes = 0
        let results = try await reader.readExisting(topic: topics.results)
        sources.append(("results (values without payload, keys, headers)", blob(results.flatMap { message -> [[UInt8]] in
            let withoutPayload = JSONValue.parsed(message.value).setting("payload", nil).bytes
            return [withoutPayload, message.key ?? []] + headerBytes(message)
        })))
        for topic in [topics.audit, topics.markers] {
            let messages = try await reader.readExisting(topic: topic)
            records += messages.count
            sources.append((topic, blob(messages.flatMap { [$0.value, $0.key ?? []] + headerBytes($0) })))
            if topic == topics.audit {
                // The named pseudonym key made the pseudonyms, the unnamed one their twins: both were scanned.
                let cards = messages.compactMap { try? AuditEvent.decode($0.value) }.compactMap(\.cardRef)
                #expect(!cards.isEmpty && cards.allSatisfy { $0.keyID == "a2" && $0.previous != nil }, "pseudonyms not under both keys")
            }
        }
        var strippingProblems: [String] = []
        var strippedChecked = 0
        var deadLetterRecords = 0
        var deadLetterLeaks: [(source: String, label: String)] = []
        var deadLettersScanned = 0
        for topic in [topics.deadLetters, topics.parked] {
            let messages = try await reader.readExisting(topic: topic)
            deadLetterRecords += messages.count
            // Headers are ours: nothing of any request may be in them.
            sources.append(("\(topic) headers", blob(messages.flatMap(headerBytes))))
            #expect(messages.allSatisfy { $0.headers.last { $0.key == DeadLetterHeader.macKeyID }?.stringValue == "r2" },
                    "a dead letter in \(topic) is not sealed with the named replay key")
            for message in messages {
                // Matched by key: a dead letter keeps the original key (each case has its own card id).
                guard let item = cases.first(where: { $0.request.key == message.key }) else {
                    strippingProblems.append("a dead letter in \(topic) matches no request sent")
                    continue
                }
                // The value (and key) is the original message by design (so it can be replayed):
                // it may hold its own request's secrets, and nothing else — no other request's, no
                // environment secret — and an Apple Pay request past its deadline not its handshake.
                // (By bytes, not by label: a device's certificates recur in several requests.)
                let own = item.path
                let ownBytes = Set(book.all.filter { needle in
                    needle.secret.hasPrefix(own + " ") && !(item.appleExpiredDeadLetter && needle.secret.hasPrefix(own + " apple."))
                }.map(\.bytes))
                deadLetterLeaks += CanaryBook.find(book.all.filter { !ownBytes.contains($0.bytes) },
                                                   in: [("\(topic) value of \(item.path)", blob([message.value, message.key ?? []]))])
                deadLettersScanned += 1
                if item.appleExpiredDeadLetter {
                    strippedChecked += 1
                    // (An over-size value is cut to 64 KiB and no longer parses: the canary search covers it.)
                    let apple = JSONValue.parsed(message.value)["apple"]
                    if apple?["nonce"] != nil || apple?["nonce_signature"] != nil || apple?["certificates"] != nil {
                        strippingProblems.append("\(item.path): an Apple Pay request past its deadline kept its handshake in \(topic)")
                    }
                }
            }
        }
        #expect(deadLettersScanned == deadCount + parkedCount, "\(deadLettersScanned) dead letters scanned, \(deadCount + parkedCount) expected")
        records += results.count + deadLetterRecords
        // Reconciliation jobs carry the card id by necessity (it is how the issuer is asked): every other secret must be absent.
        let jobs = try await reader.readExisting(topic: topics.reconcile)
        records += jobs.count
        let reconcileNeedles = book.all.filter { !$0.secret.hasSuffix("card.id") }
        let jobsBlob = blob(jobs.flatMap { [$0.value, $0.key ?? []] + headerBytes($0) })
        let reconcileLeaks = CanaryBook.find(reconcileNeedles, in: [(topics.reconcile, jobsBlob)])

        // Every source holds something: an empty one would pass without proving anything.
        let empty = (sources + [(topics.reconcile, jobsBlob)]).filter { $0.blob.isEmpty }.map(\.name)
        #expect(empty.isEmpty, "sources with nothing to scan: \(empty)")
        sources.append(stdout)
        scannedBytes = sources.reduce(0) { $0 + $1.blob.count } + jobsBlob.count

        // MARK: Not one canary anywhere.
        let needles = book.all
        let leaks = CanaryBook.find(needles, in: sources) + reconcileLeaks + deadLetterLeaks
        #expect(leaks.isEmpty, "secrets found in outputs: \(leaks.map { "\($0.label) in \($0.source)" })")
        #expect(strippingProblems.isEmpty, "\(strippingProblems)")
        #expect(strippedChecked == cases.filter(\.appleExpiredDeadLetter).count, "not every expired Apple Pay dead letter was checked")
        let logLines = localLogs.count + child.standardErrorLines.count

        var pathsByOutcome: [String: Int] = [:]
        for item in cases {
            let outcome = item.statuses.isEmpty ? (item.parked ? "parked" : "dead_lettered") : (snapshot.final(item.request.requestID)?.status.rawValue ?? "none")
            pathsByOutcome[outcome, default: 0] += 1
        }
        ReliabilityReport.emit("leaks", [
            "requests": ReliabilityReport.int(cases.count), "paths_by_outcome": ReliabilityReport.counts(pathsByOutcome),
            "canaries_planted": ReliabilityReport.int(Set(needles.map(\.secret)).count), "needles_with_encodings": ReliabilityReport.int(needles.count),
            "sources_scanned": ReliabilityReport.int(sources.count + 1), "dead_letters_scanned_whole": ReliabilityReport.int(deadLettersScanned),
            "records_scanned": ReliabilityReport.int(records), "bytes_scanned": ReliabilityReport.int(scannedBytes),
            "log_lines_scanned": ReliabilityReport.int(logLines), "payloads_decrypted": ReliabilityReport.int(payloadsChecked),
            "leaks_found": ReliabilityReport.int(leaks.count + strippingProblems.count),
            "expired_apple_dead_letters_checked_stripped": ReliabilityReport.int(strippedChecked),
            "paths_not_as_intended": ReliabilityReport.int(wrongPaths.count),
        ])
    }
}
